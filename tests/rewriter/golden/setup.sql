-- Objects the golden cases use besides the demo tables (run by
-- rewriter_golden_pg_test before the policies are built). Unprotected tables
-- hold only values the masks release, so the test can flag any raw value.
CREATE TABLE public.regions (state text, region text);
INSERT INTO public.regions VALUES ('OH', 'region-mw'), ('NY', 'region-e'), ('TX', 'region-s');
CREATE TABLE public.notes (id integer, note text);
INSERT INTO public.notes VALUES (1, 'first'), (2, 'second');
CREATE SCHEMA other;
CREATE TABLE other.people (LIKE public.people);
INSERT INTO other.people VALUES (1, 'Zed Other', '900-00-0001', 'Baker', 'Springfield', 'IL', 'cold');
CREATE TABLE public.people_archive () INHERITS (public.people);
INSERT INTO public.people_archive VALUES
  (12, 'Lola Archive', '100-00-0012', 'Lawyer', 'Seattle', 'WA', 'flu');
CREATE SCHEMA hr;
CREATE TABLE hr.people AS SELECT * FROM public.people;
CREATE TABLE public.visits (id integer, city text, state text, region text) PARTITION BY LIST (region);
CREATE TABLE public.visits_east PARTITION OF public.visits FOR VALUES IN ('east');
CREATE TABLE public.visits_west PARTITION OF public.visits FOR VALUES IN ('west');
INSERT INTO public.visits VALUES
  (1, 'Hamlet', 'OH', 'east'), (2, 'Hamlet', 'OH', 'east'), (3, 'Hamlet', 'OH', 'west'),
  (4, 'Dayton', 'OH', 'west'), (5, 'Dayton', 'OH', 'east'), (6, 'Reno', 'NV', 'west'),
  (7, 'Tulsa', 'OK', 'west'), (8, 'Boise', 'ID', 'east');

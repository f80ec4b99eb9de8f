-- The 11-row example of the SQL k-anonymization seed (occupation, city and
-- state exactly as published; names, SSNs and diagnoses are invented so the
-- demo policy has direct identifiers and a sensitive attribute to protect).
CREATE TABLE public.people (
  id integer PRIMARY KEY,
  name text NOT NULL,
  ssn text NOT NULL,
  occupation text,
  city text,
  state text,
  diagnosis text
);
INSERT INTO public.people VALUES
  (1,  'Ada Quill',      '100-00-0001', 'Lawyer',     'Washington',   'DC', 'asthma'),
  (2,  'Ben Marsh',      '100-00-0002', 'Lawyer',     'Washington',   'DC', 'flu'),
  (3,  'Cora Vance',     '100-00-0003', 'Lawyer',     'Hamlet',       'OH', 'diabetes'),
  (4,  'Dev Okafor',     '100-00-0004', 'Accountant', 'Hamlet',       'OH', 'flu'),
  (5,  'Eli Brandt',     '100-00-0005', 'Farmer',     'Hamlet',       'OH', 'asthma'),
  (6,  'Fay Lindqvist',  '100-00-0006', 'Farmer',     'Hamlet',       'OH', 'migraine'),
  (7,  'Gus Moreau',     '100-00-0007', 'Lawyer',     'Columbus',     'OH', 'flu'),
  (8,  'Hana Sato',      '100-00-0008', 'Accountant', 'Withamsville', 'OH', 'diabetes'),
  (9,  'Ivo Petrov',     '100-00-0009', 'Accountant', 'Whately',      'MA', 'asthma'),
  (10, 'Jun Alvarez',    '100-00-0010', 'Accountant', 'College Park', 'MD', 'migraine'),
  (11, 'Kit Donnelly',   '100-00-0011', 'Accountant', 'Bellevue',     'KY', 'flu');

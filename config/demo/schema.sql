-- Demo table for the ADULT benchmark data (loaded by scripts/pg-sandbox.sh
-- --demo from data/adult/adult.csv). Column names keep the data
-- set's spelling, so the hyphenated ones need double quotes in SQL.
CREATE TABLE public.adult (
  id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sex text NOT NULL,
  age integer NOT NULL,
  race text NOT NULL,
  "marital-status" text NOT NULL,
  education text NOT NULL,
  "native-country" text NOT NULL,
  workclass text NOT NULL,
  occupation text NOT NULL,
  "salary-class" text NOT NULL
);

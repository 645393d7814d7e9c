"""Stage: analysis of stored results - stats/ (paired bootstrap, families, hybrids), tables, figures and the report."""

"""The daily job: run every stage for one date, resumably, on a schedule."""

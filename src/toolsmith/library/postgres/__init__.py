"""The team backend: a tool library in a PostgreSQL database, through psycopg 3."""

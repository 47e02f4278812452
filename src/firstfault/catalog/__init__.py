"""The shipped rule catalog and vendor tables (data)."""

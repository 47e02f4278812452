"""Attribution engine: catalog, matching, inhibition, verdict."""

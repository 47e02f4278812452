"""The Blueprint: identify an attempt, collect its evidence, get a verdict, write it out."""

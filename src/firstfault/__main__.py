"""`python -m firstfault` runs the same program as the `firstfault` script."""

from firstfault.cli import main

if __name__ == "__main__":
    main()

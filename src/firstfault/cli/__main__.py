"""`python -m firstfault.cli`: the `firstfault` program."""

from firstfault.cli import main

if __name__ == "__main__":
    main()

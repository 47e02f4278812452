"""`python -m firstfault` runs the same CLI as the `firstfault` script."""

from firstfault.entry import main

if __name__ == "__main__":
    main()

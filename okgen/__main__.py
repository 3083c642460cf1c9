"""Allow ``python -m okgen``."""

from okgen.cli.main import main

if __name__ == "__main__":  # pragma: no cover
    main()

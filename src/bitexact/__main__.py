"""``python -m bitexact``: the same command line as the ``bitexact`` console script.

For a machine where the venv's ``bin`` is not on ``PATH`` (a cron job, a container's entry point).
"""

from bitexact.cli import main

if __name__ == "__main__":
    main()

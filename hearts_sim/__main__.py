"""``python -m hearts_sim`` is ``hearts-sim``; ``run`` is also the console script's entry point."""

import sys


def run() -> int:
    """The command line; one line and exit code 2 where numba is told not to compile
    (``NUMBA_DISABLE_JIT``), which the kernels cannot do without: ``hearts_sim._numba`` refuses
    it on import, before the command line exists to print the message."""
    try:
        from hearts_sim.apps.cli import main
    except ImportError as error:
        import numba

        if not numba.config.DISABLE_JIT:  # type: ignore[attr-defined]
            raise
        print(f"hearts-sim: error: {error}", file=sys.stderr)
        return 2
    return main()


if __name__ == "__main__":
    sys.exit(run())

"""``python -m hearts_sim`` is ``hearts-sim``; ``run`` is also the console script's entry point."""

import gc
import re
import signal
import sys
import warnings


def _one_line(message: Warning | str, category: type[Warning], *_: object, **__: object) -> str:
    plain = re.sub(r"\x1b\[[0-9;]*m", "", str(message))  # numba's bold, which a log shows as ESC[1m
    return f"hearts-sim: warning: {plain}\n"


def run() -> int:
    """The command line; one line and exit code 2 where numba is told not to compile
    (``NUMBA_DISABLE_JIT``), which the kernels cannot do without, or given a thread count that is
    none (``NUMBA_NUM_THREADS``): ``hearts_sim._numba`` refuses them on import, before the
    command line exists to print the message. A warning is one line
    too (no cache folder for numba, a full disk), from the first import on."""
    warnings.formatwarning = _one_line
    # the line that compiling announces says why a loop cannot be cached (``Table.uncached``)
    warnings.filterwarnings("ignore", "Cannot cache compiled function .* dynamic globals")
    try:
        import hearts_sim._numba  # noqa: F401 (first: it checks numba's settings before numba reads them)
        from hearts_sim.apps.cli import main
    except KeyboardInterrupt:  # Ctrl-C while the toolkit loads, before the command's own handler
        print("hearts-sim: interrupted", file=sys.stderr)
        return 130
    except ImportError as error:
        if error.name != "hearts_sim._numba":  # not numba's settings refused (NUMBA_DISABLE_JIT, ...)
            raise
        print(f"hearts-sim: error: {error}", file=sys.stderr)
        return 2
    code = main()
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # (not where it was ignored)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a Ctrl-C from now on ends it, not a traceback
    # the command is done: the interpreter's exit need not walk the objects numba's compiled
    # kernels left for the garbage collector (its collections at finalization took 0.4 to 1.3 s
    # of every command, a third of a warm tournament's wall time); they are freed with the process
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(run())

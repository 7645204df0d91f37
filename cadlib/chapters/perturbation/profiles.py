"""Chapter 5's profiles: the corpora, the noise levels, the trials and the noisy endpoints.
The study takes seconds, so ``paper`` is the ``cpu`` profile."""

from cadlib.endpoint_noise import WHICH

__all__ = ["PROFILES"]

PROFILES = {
    "cpu": {
        "corpora": ("probeedit", "heval-fix-py", "heval-fix-js"),
        "extra_corpora": ("heval-fix-java", "heval-fix-go", "heval-fix-cpp", "heval-fix-rust"),
        "eps_values": (0, 1, 2, 3, 5),
        "trials": 5,
        "which": WHICH,
    },
}
PROFILES["paper"] = dict(PROFILES["cpu"])

"""How the engine finds its peers when Horovod runs on Gloo (``horovodrun --gloo``, or
plain ``horovodrun`` where there is no MPI).

horovodrun starts a key-value store (its rendezvous server) and tells every rank where
it is (``HOROVOD_GLOO_RENDEZVOUS_ADDR``/``_PORT``); Horovod's own Gloo context meets
there. The engine meets there too, in a scope of its own, through Horovod's HTTP
client: the engine's Gloo transport (cpp_ops/engine/transport/gloo_transport.h) calls ``set``
and ``get`` back during its full-mesh rendezvous.
"""
import os
import time
import urllib.parse

SCOPE = "wagma_engine"


def launched_on_gloo():
    """True when horovodrun started this process for Horovod's Gloo controller."""
    return bool(os.environ.get("HOROVOD_GLOO_RENDEZVOUS_ADDR")) and \
        os.environ.get("HOROVOD_CONTROLLER", "gloo").lower() == "gloo"


class LauncherStore:
    """horovodrun's rendezvous server as a blocking key-value store."""

    def __init__(self, timeout_s):
        self.addr = os.environ["HOROVOD_GLOO_RENDEZVOUS_ADDR"]
        self.port = int(os.environ["HOROVOD_GLOO_RENDEZVOUS_PORT"])
        self.timeout_s = timeout_s

    @staticmethod
    def _key(key):
        # The server splits the request path on '/': keep the key one path segment.
        return urllib.parse.quote(key, safe="")

    def set(self, key, value):
        from horovod.runner.http.http_client import put_data_into_kvstore
        put_data_into_kvstore(self.addr, self.port, SCOPE, self._key(key), bytes(value))

    def get(self, key):
        """The value; waits for it to appear (polling), up to the timeout."""
        from horovod.runner.http.http_client import read_data_from_kvstore
        deadline = time.monotonic() + self.timeout_s
        delay = 0.005
        while True:
            try:
                return read_data_from_kvstore(self.addr, self.port, SCOPE, self._key(key))
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"'{key}' did not appear in horovodrun's store "
                                       f"within {self.timeout_s:.0f} s")
                time.sleep(delay)
                delay = min(delay * 2, 0.1)


def engine_spec(rank, size, prefix=None):
    """What the engine's Gloo start needs, from horovodrun's environment. ``prefix``
    names this member set in the store (Horovod elastic: one per generation)."""
    timeout_s = float(os.environ.get("HOROVOD_GLOO_TIMEOUT_SECONDS", "30"))
    return dict(rank=rank, size=size,
                hostname=os.environ.get("HOROVOD_HOSTNAME", "localhost"),
                iface=os.environ.get("HOROVOD_GLOO_IFACE", ""),
                # One prefix per job (horovodrun's server lives as long as the job),
                # or per member set under Horovod elastic.
                prefix=prefix or f"job.{size}.",
                timeout_s=timeout_s, store=LauncherStore(timeout_s))

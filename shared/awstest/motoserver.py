# Runs moto's server application (what `moto_server` runs) with one difference: requests are handled one
# at a time. moto's backends are not thread-safe, so under moto_server's threaded server two concurrent
# conditional writes or transactions can both pass their condition and lose an update. AWS applies each
# call atomically; serializing requests restores that, so tests that race clients test our code, not moto.
# Usage: python3 motoserver.py HOST PORT
import os
import signal
import sys
import threading

from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

host, port = sys.argv[1], int(sys.argv[2])
os.environ.setdefault("MOTO_PORT", str(port))

app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()


def serialized(environ, start_response):
    with lock:
        # Drain the response inside the lock so the whole call is one atomic step.
        return list(app(environ, start_response))


signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
run_simple(host, port, serialized, threaded=True)

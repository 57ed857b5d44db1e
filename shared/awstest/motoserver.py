# Runs moto's server application (what `moto_server` runs) with one difference: requests are handled one
# at a time per service. moto's backends are not thread-safe, so under moto_server's threaded server two
# concurrent conditional writes or transactions can both pass their condition and lose an update. AWS
# applies each call atomically; serializing requests restores that, so tests that race clients test our
# code, not moto.
#
# SQS gets a lock of its own. AWS services do not queue behind one another, but one lock for all of moto
# makes a one-millisecond SendMessage wait behind a DynamoDB query or an EC2 listing that takes a second;
# in the sandbox that wait lands on kube-scheduler, whose status update of an Unschedulable pod waits for
# the pending-pod webhook's enqueue. Every other service shares the main lock. A request for a service
# that may deliver into SQS (EventBridge rules with queue targets, SNS, the moto API's reset) or that
# cannot be told apart takes both locks, always main first, so it stays atomic with the queues.
# Usage: python3 motoserver.py HOST PORT
import os
import re
import signal
import sys
import threading

from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

host, port = sys.argv[1], int(sys.argv[2])
os.environ.setdefault("MOTO_PORT", str(port))

app = DomainDispatcherApplication(create_backend_app)


def copy_each_table_once():
    """moto's TransactWriteItems deep-copies the whole table once per item of the transaction, to roll
    back on failure: a 100-item transaction on a table of a thousand items copies it a hundred times and
    takes seconds, where DynamoDB takes milliseconds. Within one transaction this copies each object once
    and hands the same copy back; the rollback sees exactly what it saw before."""
    import copy
    import moto.dynamodb.models as models

    class CopyOnce:
        def __init__(self):
            self.cache = None

        def deepcopy(self, x, memo=None):
            if self.cache is None:
                return copy.deepcopy(x, memo)
            if id(x) not in self.cache:
                self.cache[id(x)] = copy.deepcopy(x)
            return self.cache[id(x)]

        def __getattr__(self, name):
            return getattr(copy, name)

    shim = CopyOnce()
    models.copy = shim
    transact = models.DynamoDBBackend.transact_write_items

    def transact_write_items(self, *args, **kwargs):
        shim.cache = {}
        try:
            return transact(self, *args, **kwargs)
        finally:
            shim.cache = None

    models.DynamoDBBackend.transact_write_items = transact_write_items


copy_each_table_once()


class TurnLock:
    """A lock that serves its waiters in the order they came. Python's own Lock is not fair: under steady
    load a waiting request can lose the lock to newer ones again and again, and a single call then waits
    for many seconds, which no AWS service does."""

    def __init__(self):
        self._cv = threading.Condition()
        self._next = 0
        self._serving = 0

    def __enter__(self):
        with self._cv:
            turn = self._next
            self._next += 1
            while turn != self._serving:
                self._cv.wait()

    def __exit__(self, *exc):
        with self._cv:
            self._serving += 1
            self._cv.notify_all()


main_lock = TurnLock()
sqs_lock = TurnLock()

# Services whose calls never touch the SQS backend: they need only the main lock.
MAIN_ONLY = {"ec2", "dynamodb", "iam", "ssm", "secretsmanager", "sts", "eks", "pricing", "kms", "autoscaling"}
SCOPE = re.compile(r"Credential=[^/]+/[^/]+/[^/]+/([^/]+)/aws4_request")


def service(environ):
    """The service a request is signed for (SigV4 credential scope), or None."""
    m = SCOPE.search(environ.get("HTTP_AUTHORIZATION", ""))
    return m.group(1) if m else None


def serialized(environ, start_response):
    # Drain the response inside the locks so the whole call is one atomic step.
    svc = service(environ)
    if svc == "sqs":
        with sqs_lock:
            return list(app(environ, start_response))
    if svc in MAIN_ONLY:
        with main_lock:
            return list(app(environ, start_response))
    with main_lock, sqs_lock:
        return list(app(environ, start_response))


signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
run_simple(host, port, serialized, threaded=True)

# Runs moto's server application (what `moto_server` runs) with one difference: requests are handled one
# at a time per service. moto's backends are not thread-safe, so under moto_server's threaded server two
# concurrent conditional writes or transactions can both pass their condition and lose an update. AWS
# applies each call atomically; serializing requests restores that, so tests that race clients test our
# code, not moto.
#
# SQS gets a lock of its own. AWS services do not queue behind one another, but one lock for all of moto
# makes a one-millisecond SendMessage wait behind a DynamoDB query or an EC2 listing that takes a second;
# in the sandbox that wait lands on the pending-pod webhook's enqueue, which must answer inside the API
# server's one-second timeout. Every other service shares the main lock. A request for a service
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


def transactions_back_up_only_their_items():
    """moto's TransactWriteItems deep-copies every table the transaction names, to roll back on failure:
    on a table of 5,000 claims one claim write takes seconds, where DynamoDB takes milliseconds. Requests
    are served one at a time (see serialized), so only the items the transaction names can change while
    it runs: this copies those, hands moto the tables themselves instead of copies, and on failure puts
    the named items back as they were (or removes those that did not exist)."""
    import copy
    import moto.dynamodb.models as models
    from moto.dynamodb.models.dynamo_type import DynamoType

    class NoTableCopy:
        def deepcopy(self, x, memo=None):
            return x  # only the tables of a transaction are copied through models.copy

        def __getattr__(self, name):
            return getattr(copy, name)

    transact = models.DynamoDBBackend.transact_write_items

    def named_items(backend, transact_items):
        out = []
        for entry in transact_items:
            _, op = next(iter(entry.items()))
            table = backend.tables.get(op.get("TableName") or "")
            if table is None:
                continue
            key = op.get("Item") if "Item" in op else op.get("Key")
            if not key or table.hash_key_attr not in key:
                continue
            h = DynamoType(key[table.hash_key_attr])
            r = None
            if table.range_key_attr:
                if table.range_key_attr not in key:
                    continue
                r = DynamoType(key[table.range_key_attr])
            old = table.items.get(h, {}).get(r) if r is not None else table.items.get(h)
            out.append((table, h, r, copy.deepcopy(old) if old is not None else None))
        return out

    def restore(backups):
        for table, h, r, old in reversed(backups):
            if r is None:
                if old is None:
                    table.items.pop(h, None)
                else:
                    table.items[h] = old
                continue
            part = table.items.get(h)
            if old is None:
                if part is not None:
                    part.pop(r, None)
            else:
                table.items[h][r] = old

    def transact_write_items(self, transact_items, *args, **kwargs):
        backups = named_items(self, transact_items)
        saved, models.copy = models.copy, NoTableCopy()
        try:
            return transact(self, transact_items, *args, **kwargs)
        except BaseException:
            restore(backups)
            raise
        finally:
            models.copy = saved

    models.DynamoDBBackend.transact_write_items = transact_write_items


def queries_read_only_their_partition():
    """moto answers each page of a table query by sorting every item of the table and keeping those of
    the partition: reading 16 partitions of 300 claims on a table of 5,000 takes over a minute. A query
    of the table itself (not an index) reads only its partition here; an index query skips that sort of the
whole table (its own sort orders the items it keeps)."""
    from moto.dynamodb.models.table import Table

    query = Table.query

    def partition_query(self, hash_key, *args, **kwargs):
        if kwargs.get("index_name") or (len(args) > 6 and args[6]):
            # An index query sorts what matches by the index's keys and then the table's, which orders
            # every item: the sort of the whole table that all_items does first changes nothing but costs
            # half the query's time (0.18 s against 0.09 s at 10,000 items, measured in-process).
            items = [it for part in self.items.values() for it in (part.values() if self.range_key_attr else [part])]
            self.all_items = lambda: items
            try:
                return query(self, hash_key, *args, **kwargs)
            finally:
                del self.all_items
        if hash_key is None:
            return query(self, hash_key, *args, **kwargs)
        part = self.items.get(hash_key)
        if part is None:
            items = []
        elif self.range_key_attr:
            items = sorted(part.values(), key=lambda x: x.range_key)
        else:
            items = [part]
        self.all_items = lambda: items
        try:
            return query(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    Table.query = partition_query


def resources_read_their_own_tags():
    """moto finds one EC2 resource's tags by scanning every tag of every resource (describe_tags with a
    resource-id filter), and it does so for every instance it filters by tag or describes: a tag-filtered
    DescribeInstances grows with the square of the instances (about 10 s at 1,000). An id holds no
    wildcard, so that filter matches the id's own entry and nothing else: this reads the entry itself and
    returns the same list (same keys, values, resource type and order)."""
    from moto.ec2.models.core import TaggedEC2Resource
    from moto.ec2.utils import EC2_PREFIX_TO_RESOURCE, get_prefix

    scan = TaggedEC2Resource.get_tags

    def get_tags(self):
        rid = self.id
        if not rid or any(ch in rid for ch in "*?["):
            return scan(self)
        tags = self.ec2_backend.tags.get(rid)  # get, not [], so no empty entry is made for the id
        if not tags:
            return []
        kind = EC2_PREFIX_TO_RESOURCE.get(get_prefix(rid), "")
        return [{"resource_id": rid, "key": k, "value": v, "resource_type": kind} for k, v in tags.items()]

    TaggedEC2Resource.get_tags = get_tags


def message_calls_skip_the_queue_counts():
    """moto reads a queue's settings through Queue.attributes, which builds every attribute, the
    approximate message counts included: each a walk of every message in the queue, with two clock reads
    per message. A send reads it four times per message, a receive three times per message it returns. On
    a FIFO queue of 500 messages a batch of ten sends took 1.7 s; a receive of ten from 1,000 messages took
    2 s, holding the SQS lock (below) the whole time, so every other SQS call waited. While a message call
    (send, receive, delete) runs, the counts read as 0 — none of those calls uses them; GetQueueAttributes
    still counts."""
    from moto.sqs import models

    in_call = threading.local()

    def counted_outside_message_calls(prop):
        def get(self):
            if getattr(in_call, "depth", 0) > 0:
                return 0
            return prop.fget(self)
        return property(get)

    for name in ("approximate_number_of_messages", "approximate_number_of_messages_not_visible",
                 "approximate_number_of_messages_delayed"):
        setattr(models.Queue, name, counted_outside_message_calls(getattr(models.Queue, name)))

    def message_call(method):
        def wrapped(self, *args, **kwargs):
            in_call.depth = getattr(in_call, "depth", 0) + 1
            try:
                return method(self, *args, **kwargs)
            finally:
                in_call.depth -= 1
        return wrapped

    for name in ("send_message", "send_message_batch", "receive_message", "delete_message", "delete_message_batch",
                 "change_message_visibility", "change_message_visibility_batch"):
        if hasattr(models.SQSBackend, name):
            setattr(models.SQSBackend, name, message_call(getattr(models.SQSBackend, name)))


transactions_back_up_only_their_items()
queries_read_only_their_partition()
resources_read_their_own_tags()
message_calls_skip_the_queue_counts()


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

"""Push a compiled workflow, start it once, follow it to its review, approve, follow it to the end.

Usage: HENSU_SERVER=http://127.0.0.1:8080 [HENSU_TOKEN=JWT] python review.py WORKFLOW.json TOPIC
"""

import json
import os
import sys
import uuid

from hensu_client import PAUSED_EVENT, HensuClient, StoreUnavailableError

server = os.environ.get("HENSU_SERVER", "http://127.0.0.1:8080")
token = os.environ.get("HENSU_TOKEN")  # None on a dev-mode server
with open(sys.argv[1]) as file:
    definition = json.load(file)  # what `hensuc build FILE.hwf -o -` prints

with HensuClient(server, token) as client:
    client.push_workflow(definition)

    # One key per logical start: a retry after a timeout or a 503 gives the same execution.
    key = str(uuid.uuid4())
    try:
        run = client.start(definition["id"], {"topic": sys.argv[2]}, idempotency_key=key)
    except StoreUnavailableError:
        run = client.start(definition["id"], {"topic": sys.argv[2]}, idempotency_key=key)

    # The stream ends at the run's end, or at a pause.
    last = None
    for event in client.events(run.execution_id):
        print(event.id, event.type)
        last = event
    if last is not None and last.type == PAUSED_EVENT:
        client.approve(run.execution_id, last.data["correlationId"])
        for event in client.events(run.execution_id, last_event_id=last.id):
            print(event.id, event.type)

    print(client.result(run.execution_id).status.value)
    for execution in client.iter_executions(workflow=definition["id"], page_size=100):
        print(execution.execution_id, execution.status.value)

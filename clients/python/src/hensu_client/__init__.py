"""A client for the hensu server's API (``hensuc serve``; docs/clients.md).

``HensuClient`` (sync) and ``AsyncHensuClient`` wrap the low-level client generated from the
server's OpenAPI document (``hensu_client._generated``) with what a generator does badly:
event streams that reconnect with ``Last-Event-ID``, review decisions, idempotent starts,
paging iterators and one exception class per error.
"""

from ._async import AsyncHensuClient
from ._common import PAUSED_EVENT, STREAM_SILENCE_TIMEOUT, TERMINAL_EVENTS, Event, Page, StreamEnded
from ._generated.models.execution_ack import ExecutionAck
from ._generated.models.execution_result import ExecutionResult
from ._generated.models.execution_started import ExecutionStarted
from ._generated.models.execution_state import ExecutionState
from ._generated.models.execution_status import ExecutionStatus
from ._generated.models.paused_execution import PausedExecution
from ._generated.models.workflow_entry import WorkflowEntry
from ._generated.models.workflow_saved import WorkflowSaved
from ._sync import HensuClient
from .errors import *  # noqa: F403 (every error class is part of the API)
from .errors import __all__ as _errors_all

__all__ = [
    "AsyncHensuClient",
    "Event",
    "ExecutionAck",
    "ExecutionResult",
    "ExecutionStarted",
    "ExecutionState",
    "ExecutionStatus",
    "HensuClient",
    "PAUSED_EVENT",
    "Page",
    "PausedExecution",
    "STREAM_SILENCE_TIMEOUT",
    "StreamEnded",
    "TERMINAL_EVENTS",
    "WorkflowEntry",
    "WorkflowSaved",
    *_errors_all,
]

""" Contains all the data models used in inputs/outputs """

from .acknowledged import Acknowledged
from .batch_start import BatchStart
from .batch_start_contexts_item import BatchStartContextsItem
from .batch_started import BatchStarted
from .client_status import ClientStatus
from .context_difference import ContextDifference
from .diff_run import DiffRun
from .diff_step import DiffStep
from .diff_step_side import DiffStepSide
from .difference import Difference
from .document_response_200 import DocumentResponse200
from .error_body import ErrorBody
from .error_body_diagnostics_type_0 import ErrorBodyDiagnosticsType0
from .execution_ack import ExecutionAck
from .execution_event_type_0 import ExecutionEventType0
from .execution_event_type_0_type import ExecutionEventType0Type
from .execution_event_type_1 import ExecutionEventType1
from .execution_event_type_10 import ExecutionEventType10
from .execution_event_type_10_type import ExecutionEventType10Type
from .execution_event_type_1_type import ExecutionEventType1Type
from .execution_event_type_2_output import ExecutionEventType2Output
from .execution_event_type_2_type import ExecutionEventType2Type
from .execution_event_type_3_output import ExecutionEventType3Output
from .execution_event_type_3_type import ExecutionEventType3Type
from .execution_event_type_4 import ExecutionEventType4
from .execution_event_type_4_type import ExecutionEventType4Type
from .execution_event_type_5 import ExecutionEventType5
from .execution_event_type_5_type import ExecutionEventType5Type
from .execution_event_type_6 import ExecutionEventType6
from .execution_event_type_6_type import ExecutionEventType6Type
from .execution_event_type_7 import ExecutionEventType7
from .execution_event_type_7_type import ExecutionEventType7Type
from .execution_event_type_8 import ExecutionEventType8
from .execution_event_type_8_type import ExecutionEventType8Type
from .execution_event_type_9 import ExecutionEventType9
from .execution_event_type_9_type import ExecutionEventType9Type
from .execution_forked import ExecutionForked
from .execution_replayed import ExecutionReplayed
from .execution_result import ExecutionResult
from .execution_result_output import ExecutionResultOutput
from .execution_started import ExecutionStarted
from .execution_state import ExecutionState
from .execution_status import ExecutionStatus
from .first_difference import FirstDifference
from .fork_execution import ForkExecution
from .fork_execution_context_edits_type_0 import ForkExecutionContextEditsType0
from .gateway_error import GatewayError
from .gateway_status import GatewayStatus
from .health import Health
from .health_status import HealthStatus
from .missed import Missed
from .overlap import Overlap
from .pause_reason import PauseReason
from .paused_execution import PausedExecution
from .pending_review import PendingReview
from .pending_review_arguments_type_0 import PendingReviewArgumentsType0
from .pending_reviews import PendingReviews
from .pull_response_200 import PullResponse200
from .push_body import PushBody
from .redrive_execution import RedriveExecution
from .redrive_execution_context_edits_type_0 import RedriveExecutionContextEditsType0
from .replay_divergence import ReplayDivergence
from .replay_execution import ReplayExecution
from .resume_execution import ResumeExecution
from .resume_execution_arguments_type_0 import ResumeExecutionArgumentsType0
from .resume_execution_context_edits_type_0 import ResumeExecutionContextEditsType0
from .review_kind import ReviewKind
from .runs_diff import RunsDiff
from .schedule import Schedule
from .schedule_context import ScheduleContext
from .schedule_detail import ScheduleDetail
from .schedule_firing import ScheduleFiring
from .schedule_request import ScheduleRequest
from .schedule_request_context_type_0 import ScheduleRequestContextType0
from .schedule_warnings_type_0 import ScheduleWarningsType0
from .send_signal import SendSignal
from .send_signal_payload import SendSignalPayload
from .signal_sent import SignalSent
from .start_execution import StartExecution
from .start_execution_context_type_0 import StartExecutionContextType0
from .start_signal import StartSignal
from .start_signal_payload import StartSignalPayload
from .workflow_entry import WorkflowEntry
from .workflow_saved import WorkflowSaved

__all__ = (
    "Acknowledged",
    "BatchStart",
    "BatchStartContextsItem",
    "BatchStarted",
    "ClientStatus",
    "ContextDifference",
    "Difference",
    "DiffRun",
    "DiffStep",
    "DiffStepSide",
    "DocumentResponse200",
    "ErrorBody",
    "ErrorBodyDiagnosticsType0",
    "ExecutionAck",
    "ExecutionEventType0",
    "ExecutionEventType0Type",
    "ExecutionEventType1",
    "ExecutionEventType10",
    "ExecutionEventType10Type",
    "ExecutionEventType1Type",
    "ExecutionEventType2Output",
    "ExecutionEventType2Type",
    "ExecutionEventType3Output",
    "ExecutionEventType3Type",
    "ExecutionEventType4",
    "ExecutionEventType4Type",
    "ExecutionEventType5",
    "ExecutionEventType5Type",
    "ExecutionEventType6",
    "ExecutionEventType6Type",
    "ExecutionEventType7",
    "ExecutionEventType7Type",
    "ExecutionEventType8",
    "ExecutionEventType8Type",
    "ExecutionEventType9",
    "ExecutionEventType9Type",
    "ExecutionForked",
    "ExecutionReplayed",
    "ExecutionResult",
    "ExecutionResultOutput",
    "ExecutionStarted",
    "ExecutionState",
    "ExecutionStatus",
    "FirstDifference",
    "ForkExecution",
    "ForkExecutionContextEditsType0",
    "GatewayError",
    "GatewayStatus",
    "Health",
    "HealthStatus",
    "Missed",
    "Overlap",
    "PausedExecution",
    "PauseReason",
    "PendingReview",
    "PendingReviewArgumentsType0",
    "PendingReviews",
    "PullResponse200",
    "PushBody",
    "RedriveExecution",
    "RedriveExecutionContextEditsType0",
    "ReplayDivergence",
    "ReplayExecution",
    "ResumeExecution",
    "ResumeExecutionArgumentsType0",
    "ResumeExecutionContextEditsType0",
    "ReviewKind",
    "RunsDiff",
    "Schedule",
    "ScheduleContext",
    "ScheduleDetail",
    "ScheduleFiring",
    "ScheduleRequest",
    "ScheduleRequestContextType0",
    "ScheduleWarningsType0",
    "SendSignal",
    "SendSignalPayload",
    "SignalSent",
    "StartExecution",
    "StartExecutionContextType0",
    "StartSignal",
    "StartSignalPayload",
    "WorkflowEntry",
    "WorkflowSaved",
)

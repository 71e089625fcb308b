from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.start_execution_context_type_0 import StartExecutionContextType0
  from ..models.start_signal import StartSignal





T = TypeVar("T", bound="StartExecution")



@_attrs_define
class StartExecution:
    """ `POST /api/v1/executions`: which workflow to run, and its initial context.

        Attributes:
            context (None | StartExecutionContextType0 | Unset): The initial context (the workflow's inputs and anything
                else).
            signals (list[StartSignal] | Unset): Signal-with-start (a hensu addition; docs/language.md, *Timers and
                signals*): signals
                sent to the new execution as it starts, each checked like `POST …/signals/{name}`
                before anything is stored.
            workflow_id (None | str | Unset): A workflow the tenant pushed (required).
     """

    context: None | StartExecutionContextType0 | Unset = UNSET
    signals: list[StartSignal] | Unset = UNSET
    workflow_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.start_execution_context_type_0 import StartExecutionContextType0 # noqa: PLC0415
        from ..models.start_signal import StartSignal # noqa: PLC0415
        context: dict[str, Any] | None | Unset
        if isinstance(self.context, Unset):
            context = UNSET
        elif isinstance(self.context, StartExecutionContextType0):
            context = self.context.to_dict()
        else:
            context = self.context

        signals: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.signals, Unset):
            signals = []
            for signals_item_data in self.signals:
                signals_item = signals_item_data.to_dict()
                signals.append(signals_item)



        workflow_id: None | str | Unset
        if isinstance(self.workflow_id, Unset):
            workflow_id = UNSET
        else:
            workflow_id = self.workflow_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if context is not UNSET:
            field_dict["context"] = context
        if signals is not UNSET:
            field_dict["signals"] = signals
        if workflow_id is not UNSET:
            field_dict["workflowId"] = workflow_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.start_execution_context_type_0 import StartExecutionContextType0 # noqa: PLC0415
        from ..models.start_signal import StartSignal # noqa: PLC0415
        d = dict(src_dict)
        def _parse_context(data: object) -> None | StartExecutionContextType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                context_type_0 = StartExecutionContextType0.from_dict(data)



                return context_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StartExecutionContextType0 | Unset, data)

        context = _parse_context(d.pop("context", UNSET))


        _signals = d.pop("signals", UNSET)
        signals: list[StartSignal] | Unset = UNSET
        if _signals is not UNSET:
            signals = []
            for signals_item_data in _signals:
                signals_item = StartSignal.from_dict(signals_item_data)



                signals.append(signals_item)


        def _parse_workflow_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workflow_id = _parse_workflow_id(d.pop("workflowId", UNSET))


        start_execution = cls(
            context=context,
            signals=signals,
            workflow_id=workflow_id,
        )


        start_execution.additional_properties = d
        return start_execution

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties

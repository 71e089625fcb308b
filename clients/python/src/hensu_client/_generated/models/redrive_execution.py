from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.redrive_execution_context_edits_type_0 import RedriveExecutionContextEditsType0





T = TypeVar("T", bound="RedriveExecution")



@_attrs_define
class RedriveExecution:
    """ `POST /api/v1/executions/{id}/redrive`.

        Attributes:
            context_edits (None | RedriveExecutionContextEditsType0 | Unset): Merged into the context at the fork point.
     """

    context_edits: None | RedriveExecutionContextEditsType0 | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.redrive_execution_context_edits_type_0 import RedriveExecutionContextEditsType0 # noqa: PLC0415
        context_edits: dict[str, Any] | None | Unset
        if isinstance(self.context_edits, Unset):
            context_edits = UNSET
        elif isinstance(self.context_edits, RedriveExecutionContextEditsType0):
            context_edits = self.context_edits.to_dict()
        else:
            context_edits = self.context_edits


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if context_edits is not UNSET:
            field_dict["contextEdits"] = context_edits

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.redrive_execution_context_edits_type_0 import RedriveExecutionContextEditsType0 # noqa: PLC0415
        d = dict(src_dict)
        def _parse_context_edits(data: object) -> None | RedriveExecutionContextEditsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                context_edits_type_0 = RedriveExecutionContextEditsType0.from_dict(data)



                return context_edits_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RedriveExecutionContextEditsType0 | Unset, data)

        context_edits = _parse_context_edits(d.pop("contextEdits", UNSET))


        redrive_execution = cls(
            context_edits=context_edits,
        )


        redrive_execution.additional_properties = d
        return redrive_execution

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ReplayDivergence")



@_attrs_define
class ReplayDivergence:
    """ The first difference between the recording and the replay.

        Attributes:
            code (str): `E0916`, or `E0917` when a call the recording lacks caused it.
            expected (Any):
            got (Any):
            kind (str): `path`, `status`, `output`, `backtrack`, `context` or `end`.
            message (str):
            node (str):
            key (None | str | Unset): The context key, for `context`.
            step (int | None | Unset): The step (as the history numbers them) for `path`, `status` and `output`.
     """

    code: str
    expected: Any
    got: Any
    kind: str
    message: str
    node: str
    key: None | str | Unset = UNSET
    step: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        code = self.code

        expected = self.expected

        got = self.got

        kind = self.kind

        message = self.message

        node = self.node

        key: None | str | Unset
        if isinstance(self.key, Unset):
            key = UNSET
        else:
            key = self.key

        step: int | None | Unset
        if isinstance(self.step, Unset):
            step = UNSET
        else:
            step = self.step


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "code": code,
            "expected": expected,
            "got": got,
            "kind": kind,
            "message": message,
            "node": node,
        })
        if key is not UNSET:
            field_dict["key"] = key
        if step is not UNSET:
            field_dict["step"] = step

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        code = d.pop("code")

        expected = d.pop("expected")

        got = d.pop("got")

        kind = d.pop("kind")

        message = d.pop("message")

        node = d.pop("node")

        def _parse_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        key = _parse_key(d.pop("key", UNSET))


        def _parse_step(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        step = _parse_step(d.pop("step", UNSET))


        replay_divergence = cls(
            code=code,
            expected=expected,
            got=got,
            kind=kind,
            message=message,
            node=node,
            key=key,
            step=step,
        )


        replay_divergence.additional_properties = d
        return replay_divergence

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ClientStatus")



@_attrs_define
class ClientStatus:
    """ Whether one client is connected, and for how long.

        Attributes:
            client_id (str):
            connected (bool):
            connected_duration_ms (int | None | Unset):
     """

    client_id: str
    connected: bool
    connected_duration_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        client_id = self.client_id

        connected = self.connected

        connected_duration_ms: int | None | Unset
        if isinstance(self.connected_duration_ms, Unset):
            connected_duration_ms = UNSET
        else:
            connected_duration_ms = self.connected_duration_ms


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "clientId": client_id,
            "connected": connected,
        })
        if connected_duration_ms is not UNSET:
            field_dict["connectedDurationMs"] = connected_duration_ms

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        client_id = d.pop("clientId")

        connected = d.pop("connected")

        def _parse_connected_duration_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        connected_duration_ms = _parse_connected_duration_ms(d.pop("connectedDurationMs", UNSET))


        client_status = cls(
            client_id=client_id,
            connected=connected,
            connected_duration_ms=connected_duration_ms,
        )


        client_status.additional_properties = d
        return client_status

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

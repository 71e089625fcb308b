from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="GatewayStatus")



@_attrs_define
class GatewayStatus:
    """ Connected clients and pending requests.

        Attributes:
            connected_clients (int):
            pending_requests (int):
     """

    connected_clients: int
    pending_requests: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        connected_clients = self.connected_clients

        pending_requests = self.pending_requests


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "connectedClients": connected_clients,
            "pendingRequests": pending_requests,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        connected_clients = d.pop("connectedClients")

        pending_requests = d.pop("pendingRequests")

        gateway_status = cls(
            connected_clients=connected_clients,
            pending_requests=pending_requests,
        )


        gateway_status.additional_properties = d
        return gateway_status

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

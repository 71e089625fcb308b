from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_body import ErrorBody
from ...models.schedule import Schedule
from ...models.schedule_request import ScheduleRequest
from typing import cast



def _get_kwargs(
    schedule_id: str,
    *,
    body: ScheduleRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/api/v1/schedules/{schedule_id}".format(schedule_id=quote(str(schedule_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorBody | Schedule | None:
    if response.status_code == 200:
        response_200 = Schedule.from_dict(response.json())



        return response_200

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())



        return response_400

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())



        return response_404

    if response.status_code == 409:
        response_409 = ErrorBody.from_dict(response.json())



        return response_409

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorBody | Schedule]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    schedule_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ScheduleRequest,

) -> Response[ErrorBody | Schedule]:
    """ Update: the whole definition, checked as a creation.

    Args:
        schedule_id (str):
        body (ScheduleRequest): `POST /api/v1/schedules` (with `id`) and `PUT
            /api/v1/schedules/{scheduleId}` (without):
            the whole definition. Unknown fields are refused.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | Schedule]
     """


    kwargs = _get_kwargs(
        schedule_id=schedule_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    schedule_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ScheduleRequest,

) -> ErrorBody | Schedule | None:
    """ Update: the whole definition, checked as a creation.

    Args:
        schedule_id (str):
        body (ScheduleRequest): `POST /api/v1/schedules` (with `id`) and `PUT
            /api/v1/schedules/{scheduleId}` (without):
            the whole definition. Unknown fields are refused.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | Schedule
     """


    return sync_detailed(
        schedule_id=schedule_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    schedule_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ScheduleRequest,

) -> Response[ErrorBody | Schedule]:
    """ Update: the whole definition, checked as a creation.

    Args:
        schedule_id (str):
        body (ScheduleRequest): `POST /api/v1/schedules` (with `id`) and `PUT
            /api/v1/schedules/{scheduleId}` (without):
            the whole definition. Unknown fields are refused.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | Schedule]
     """


    kwargs = _get_kwargs(
        schedule_id=schedule_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    schedule_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ScheduleRequest,

) -> ErrorBody | Schedule | None:
    """ Update: the whole definition, checked as a creation.

    Args:
        schedule_id (str):
        body (ScheduleRequest): `POST /api/v1/schedules` (with `id`) and `PUT
            /api/v1/schedules/{scheduleId}` (without):
            the whole definition. Unknown fields are refused.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | Schedule
     """


    return (await asyncio_detailed(
        schedule_id=schedule_id,
client=client,
body=body,

    )).parsed

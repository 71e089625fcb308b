from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_body import ErrorBody
from ...models.send_signal import SendSignal
from ...models.signal_sent import SignalSent
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    execution_id: str,
    name: str,
    *,
    body: None | SendSignal | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/executions/{execution_id}/signals/{name}".format(execution_id=quote(str(execution_id), safe=""),name=quote(str(name), safe=""),),
    }

    
    if isinstance(body, SendSignal):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorBody | SignalSent | None:
    if response.status_code == 200:
        response_200 = SignalSent.from_dict(response.json())



        return response_200

    if response.status_code == 202:
        response_202 = SignalSent.from_dict(response.json())



        return response_202

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorBody | SignalSent]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    execution_id: str,
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | SendSignal | Unset = UNSET,

) -> Response[ErrorBody | SignalSent]:
    """ Signal (docs/language.md, *Timers and signals*): 202 when the execution was waiting for it
    and continues, 200 when it is kept for the execution's next wait for that name.

    Args:
        execution_id (str):
        name (str):
        body (None | SendSignal | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | SignalSent]
     """


    kwargs = _get_kwargs(
        execution_id=execution_id,
name=name,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    execution_id: str,
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | SendSignal | Unset = UNSET,

) -> ErrorBody | SignalSent | None:
    """ Signal (docs/language.md, *Timers and signals*): 202 when the execution was waiting for it
    and continues, 200 when it is kept for the execution's next wait for that name.

    Args:
        execution_id (str):
        name (str):
        body (None | SendSignal | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | SignalSent
     """


    return sync_detailed(
        execution_id=execution_id,
name=name,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    execution_id: str,
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | SendSignal | Unset = UNSET,

) -> Response[ErrorBody | SignalSent]:
    """ Signal (docs/language.md, *Timers and signals*): 202 when the execution was waiting for it
    and continues, 200 when it is kept for the execution's next wait for that name.

    Args:
        execution_id (str):
        name (str):
        body (None | SendSignal | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | SignalSent]
     """


    kwargs = _get_kwargs(
        execution_id=execution_id,
name=name,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    execution_id: str,
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | SendSignal | Unset = UNSET,

) -> ErrorBody | SignalSent | None:
    """ Signal (docs/language.md, *Timers and signals*): 202 when the execution was waiting for it
    and continues, 200 when it is kept for the execution's next wait for that name.

    Args:
        execution_id (str):
        name (str):
        body (None | SendSignal | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | SignalSent
     """


    return (await asyncio_detailed(
        execution_id=execution_id,
name=name,
client=client,
body=body,

    )).parsed

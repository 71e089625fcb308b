from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_body import ErrorBody
from ...models.runs_diff import RunsDiff
from typing import cast



def _get_kwargs(
    execution_id: str,
    other_execution_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/executions/{execution_id}/diff/{other_execution_id}".format(execution_id=quote(str(execution_id), safe=""),other_execution_id=quote(str(other_execution_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorBody | RunsDiff | None:
    if response.status_code == 200:
        response_200 = RunsDiff.from_dict(response.json())



        return response_200

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())



        return response_400

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())



        return response_404

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorBody | RunsDiff]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    execution_id: str,
    other_execution_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[ErrorBody | RunsDiff]:
    """ Diff: the two executions compared step by step — path, outputs, errors, final context and
    status, with the first step where they part (docs/server.md, *Time travel*): the document
    `hensuc runs diff A B --json` prints (docs/schemas/runs-diff.schema.json).

    Args:
        execution_id (str):
        other_execution_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | RunsDiff]
     """


    kwargs = _get_kwargs(
        execution_id=execution_id,
other_execution_id=other_execution_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    execution_id: str,
    other_execution_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> ErrorBody | RunsDiff | None:
    """ Diff: the two executions compared step by step — path, outputs, errors, final context and
    status, with the first step where they part (docs/server.md, *Time travel*): the document
    `hensuc runs diff A B --json` prints (docs/schemas/runs-diff.schema.json).

    Args:
        execution_id (str):
        other_execution_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | RunsDiff
     """


    return sync_detailed(
        execution_id=execution_id,
other_execution_id=other_execution_id,
client=client,

    ).parsed

async def asyncio_detailed(
    execution_id: str,
    other_execution_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[ErrorBody | RunsDiff]:
    """ Diff: the two executions compared step by step — path, outputs, errors, final context and
    status, with the first step where they part (docs/server.md, *Time travel*): the document
    `hensuc runs diff A B --json` prints (docs/schemas/runs-diff.schema.json).

    Args:
        execution_id (str):
        other_execution_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | RunsDiff]
     """


    kwargs = _get_kwargs(
        execution_id=execution_id,
other_execution_id=other_execution_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    execution_id: str,
    other_execution_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> ErrorBody | RunsDiff | None:
    """ Diff: the two executions compared step by step — path, outputs, errors, final context and
    status, with the first step where they part (docs/server.md, *Time travel*): the document
    `hensuc runs diff A B --json` prints (docs/schemas/runs-diff.schema.json).

    Args:
        execution_id (str):
        other_execution_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | RunsDiff
     """


    return (await asyncio_detailed(
        execution_id=execution_id,
other_execution_id=other_execution_id,
client=client,

    )).parsed

"""``bitexact.wrap`` given what it cannot wrap (most often an API's own client object) says what records it."""

from __future__ import annotations

import pytest

import bitexact


class OpenAI:
    """Stands for an API library's client object, which holds an httpx client and is none itself."""


def test_wrap_given_an_api_client_says_what_to_wrap_instead() -> None:
    with pytest.raises(bitexact.sdk.SdkArgumentError) as caught:
        bitexact.wrap(OpenAI())
    message = str(caught.value)
    assert caught.value.field == "client"
    assert "not OpenAI" in message
    assert "http_client=bitexact.wrap(httpx.Client())" in message and "bitexact.instrument()" in message

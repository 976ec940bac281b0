# SPDX-License-Identifier: Apache-2.0

''' serve as a gateway, both ways: what an upstream server asks and tells
    during a call (elicitation, sampling, log messages, progress) reaches
    the downstream client which made the call, and its answers go back up;
    a downstream cancellation cancels the upstream call; the changes it
    announces reach the clients subscribed.
'''


import asyncio
import contextlib
import json
import sys

import pytest

from mcp import ClientSession, types

import invocables

from invocables import invokers, serving
from invocables.mcp import _http as sdk_http
from invocables.mcp import _sdk as sdk
from invocables.mcp import redaction

from . import mcp_support


_RELAY = str( mcp_support.SERVERS / 'relay_server.py' )


class _Downstream:
    ''' The downstream client's callbacks, recorded. '''

    def __init__( self ):
        self.logs = [ ]
        self.progress = [ ]
        self.elicitations = [ ]
        self.samplings = [ ]
        self.logged = asyncio.Event( )

    async def on_log( self, parameters ):
        self.logs.append(
            ( parameters.level, parameters.data, parameters.logger ) )
        self.logged.set( )

    async def on_elicit( self, context, parameters ):
        self.elicitations.append( (
            parameters.message,
            sdk.access_field( parameters, 'requested_schema' ) ) )
        return types.ElicitResult(
            action = 'accept', content = { 'view': 'fine' } )

    async def on_sample( self, context, parameters ):
        self.samplings.append( (
            parameters.messages[ 0 ].content.text,
            sdk.access_field( parameters, 'system_prompt' ),
            sdk.access_field( parameters, 'max_tokens' ) ) )
        return types.CreateMessageResult(
            role = 'assistant', model = 'test',
            content = types.TextContent( type = 'text', text = 'a summary' ) )

    async def on_progress( self, value, total, message ):
        self.progress.append( ( value, total, message ) )

    def produce_callbacks( self ):
        ''' Returns callbacks of the SDK's client. '''
        return {
            'logging_callback': self.on_log,
            'elicitation_callback': self.on_elicit,
            'sampling_callback': self.on_sample,
            'mode': 'legacy', # logging/setLevel: the handshake's versions
        }


class _Liaison:
    ''' An application's answers, recorded. '''

    def __init__( self ):
        self.records = [ ]

    async def log( self, level, data, logger ):
        self.records.append( ( 'log', level, data, logger ) )

    async def report_progress( self, progress, total, message ):
        self.records.append( ( 'progress', progress, total, message ) )

    async def elicit( self, message, schema ):
        self.records.append( ( 'elicit', message ) )
        return { 'action': 'accept', 'content': { 'view': 'mine' } }

    async def sample( self, messages, **options ):
        self.records.append( ( 'sample', options[ 'max_tokens' ] ) )
        return { 'role': 'assistant', 'model': 'local', 'content': {
            'type': 'text', 'text': 'my summary' } }


async def _consult( server, downstream ):
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), **downstream.produce_callbacks( )
        ) as client:
            await client.set_logging_level( 'debug' )
            result = await client.call_tool(
                'consult', { 'topic': 'tea' },
                progress_callback = downstream.on_progress )
    assert not sdk.access_field( result, 'is_error' ), result
    return json.loads( result.content[ 0 ].text )


def _verify_relayed( answers, downstream ):
    assert downstream.elicitations == [ (
        'Your view on tea?', {
            'type': 'object',
            'properties': { 'view': { 'type': 'string' } },
            'required': [ 'view' ] } ) ]
    assert answers[ 'elicited' ] == {
        'action': 'accept', 'content': { 'view': 'fine' } }
    assert downstream.samplings == [ ( 'Summarize tea.', 'Be brief.', 50 ) ]
    assert answers[ 'sampled' ][ 'content' ][ 'text' ] == 'a summary'
    assert answers[ 'sampled' ][ 'model' ] == 'test'
    assert downstream.logs == [ ( 'info', { 'consulting': 'tea' }, 'relay' ) ]
    assert downstream.progress == [
        ( 1, 3, 'asking about tea' ), ( 2, 3, 'sampling' ),
        ( 3, 3, 'done' ) ]


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_100_stdio_upstream_relayed( ):
    ''' A stdio upstream's elicitation, sampling, log message and progress
        reach the downstream client; its answers reach the upstream.
    '''
    upstream = invocables.mcp.produce_ensemble(
        'relay', command = [ mcp_support.SERVERS_PYTHON, _RELAY ] )
    server = serving.ToolServer( [ upstream ] )
    downstream = _Downstream( )
    answers = await _consult( server, downstream )
    _verify_relayed( answers, downstream )


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_110_http_upstream_relayed( ):
    ''' A streamable HTTP upstream's requests, which come on the call's own
        stream, reach the downstream client likewise.
    '''
    port = mcp_support.select_port( )
    with mcp_support.serve_http(
        [ mcp_support.SERVERS_PYTHON, _RELAY, '--http', str( port ) ], port
    ) as url:
        server = serving.ToolServer( [
            invocables.mcp.produce_ensemble( 'relay', url = url ) ] )
        downstream = _Downstream( )
        answers = await _consult( server, downstream )
    _verify_relayed( answers, downstream )


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_120_downstream_without_callbacks( ):
    ''' A downstream client which cannot elicit or sample: the upstream
        gets the error its own client would have sent.
    '''
    upstream = invocables.mcp.produce_ensemble(
        'relay', command = [ mcp_support.SERVERS_PYTHON, _RELAY ] )
    server = serving.ToolServer( [ upstream ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            result = await client.call_tool( 'consult', { 'topic': 'tea' } )
    assert not sdk.access_field( result, 'is_error' ), result
    answers = json.loads( result.content[ 0 ].text )
    assert answers[ 'elicited' ].startswith( 'error ' )
    assert answers[ 'sampled' ].startswith( 'error ' )


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_130_concurrent_calls_kept_apart( ):
    ''' Two clients calling at once through one HTTP upstream: each
        elicitation reaches the client whose call it serves, while both
        calls run, and each answer goes back to its own call.

        With the SDK 1.x, whose streamable HTTP client does not tell on
        which stream a request came, a request belongs to a call only when
        that call runs alone (as over stdio): each elicitation reaches its
        own client or is refused, never the other client.
    '''
    port = mcp_support.select_port( )
    asked = [ ]
    both = asyncio.Event( )

    def produce_elicitor( view ):
        async def elicit( context, parameters ):
            asked.append( view )
            if len( asked ) == 2: both.set( )
            if sdk.MAJOR >= 2: await asyncio.wait_for( both.wait( ), 10 )
            return types.ElicitResult(
                action = 'accept', content = { 'view': view } )
        return elicit

    async def consult( client ):
        result = await client.call_tool( 'consult', { 'topic': 'tea' } )
        return json.loads( result.content[ 0 ].text )[ 'elicited' ]

    with mcp_support.serve_http(
        [ mcp_support.SERVERS_PYTHON, _RELAY, '--http', str( port ) ], port
    ) as url:
        server = serving.ToolServer( [
            invocables.mcp.produce_ensemble( 'relay', url = url ) ] )
        async with invocables.connect_ensembles( server.ensembles ):
            async with (
                mcp_support.open_memory_client(
                    server.produce_server( ),
                    elicitation_callback = produce_elicitor( 'first' ),
                    mode = 'legacy',
                ) as first,
                mcp_support.open_memory_client(
                    server.produce_server( ),
                    elicitation_callback = produce_elicitor( 'second' ),
                    mode = 'legacy',
                ) as second,
            ):
                answers = await asyncio.gather(
                    consult( first ), consult( second ) )
    if sdk.MAJOR < 2:
        for view, answer in zip( ( 'first', 'second' ), answers ):
            if view in asked: assert answer[ 'content' ][ 'view' ] == view
            else: assert 'Nobody can answer elicitation' in answer
        return
    assert sorted( asked ) == [ 'first', 'second' ]
    assert [ answer[ 'content' ][ 'view' ] for answer in answers ] == [
        'first', 'second' ]


@pytest.mark.asyncio
async def test_200_application_liaison( ):
    ''' In an application's loop, a relaying ensemble's server asks the
        application's liaison, as a local tool does.
    '''
    upstream = invocables.mcp.produce_ensemble(
        'relay', command = [ mcp_support.SERVERS_PYTHON, _RELAY ] )
    upstream.configure_relay( )
    liaison = _Liaison( )
    async with upstream:
        with invokers.liaise( liaison ):
            results = await invocables.execute_invocations(
                [ invocables.InvocationCanister(
                    identifier = 'c1', name = 'consult',
                    arguments = { 'topic': 'tea' } ) ],
                [ upstream ] )
    assert not results[ 0 ].is_error( ), results[ 0 ]
    answers = json.loads( results[ 0 ].content[ 0 ].text )
    assert answers[ 'elicited' ] == {
        'action': 'accept', 'content': { 'view': 'mine' } }
    assert answers[ 'sampled' ][ 'content' ][ 'text' ] == 'my summary'
    assert liaison.records == [
        ( 'log', 'info', { 'consulting': 'tea' }, 'relay' ),
        ( 'progress', 1, 3, 'asking about tea' ),
        ( 'elicit', 'Your view on tea?' ),
        ( 'progress', 2, 3, 'sampling' ),
        ( 'sample', 50 ),
        ( 'progress', 3, 3, 'done' ),
    ]


class _LiaisonAmiss( _Liaison ):
    ''' A liaison whose accepted content breaks the requested schema. '''

    async def elicit( self, message, schema ):
        self.records.append( ( 'elicit', message ) )
        return { 'action': 'accept', 'content': { 'view': 42 } }


@pytest.mark.asyncio
async def test_205_relayed_answer_validated( ):
    ''' An answer relayed to the server meets the requested schema, as
        the ensemble's own elicitor's does: else the server gets an error
        naming where and which rule, never the value.
    '''
    upstream = invocables.mcp.produce_ensemble(
        'relay', command = [ mcp_support.SERVERS_PYTHON, _RELAY ] )
    upstream.configure_relay( )
    liaison = _LiaisonAmiss( )
    async with upstream:
        with invokers.liaise( liaison ):
            results = await invocables.execute_invocations(
                [ invocables.InvocationCanister(
                    identifier = 'c1', name = 'consult',
                    arguments = { 'topic': 'tea' } ) ],
                [ upstream ] )
    answers = json.loads( results[ 0 ].content[ 0 ].text )
    elicited = answers[ 'elicited' ]
    assert elicited.startswith( 'error ' ), elicited
    assert 'does not match the requested schema' in elicited
    assert "keyword 'type'" in elicited
    assert '42' not in elicited.split( ':', 1 )[ 1 ]
    assert ( 'elicit', 'Your view on tea?' ) in liaison.records


@pytest.mark.asyncio
async def test_210_no_caller_falls_back( ):
    ''' Without a liaison, the ensemble's own callbacks answer; without
        them, the server is told that nobody can answer.
    '''
    async def elicit( request ):
        return { 'action': 'decline' }

    call = invocables.InvocationCanister(
        identifier = 'c1', name = 'consult', arguments = { 'topic': 'tea' } )
    upstream = invocables.mcp.produce_ensemble(
        'relay', command = [ mcp_support.SERVERS_PYTHON, _RELAY ],
        elicitor = elicit )
    upstream.configure_relay( )
    async with upstream:
        results = await invocables.execute_invocations(
            [ call ], [ upstream ] )
    answers = json.loads( results[ 0 ].content[ 0 ].text )
    assert answers[ 'elicited' ] == { 'action': 'decline' }
    assert 'Nobody can answer sampling' in answers[ 'sampled' ]


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_300_cancellation_reaches_upstream( ):
    ''' A downstream client which cancels its call cancels the upstream
        call.
    '''
    upstream = invocables.mcp.produce_ensemble(
        'relay', command = [ mcp_support.SERVERS_PYTHON, _RELAY ] )
    server = serving.ToolServer( [ upstream ] )
    downstream = _Downstream( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), **downstream.produce_callbacks( )
        ) as client:
            await client.set_logging_level( 'debug' )
            # The 1.x client tells no cancellation itself: the library's
            # call does, as a client of either major would.
            call = asyncio.ensure_future(
                sdk.call_tool( client, 'block', { }, None, None ) )
            await asyncio.wait_for( downstream.logged.wait( ), 10 )
            call.cancel( )
            with pytest.raises( asyncio.CancelledError ): await call
            result = await client.call_tool( 'cancellations', { } )
    assert result.content[ 0 ].text == '1'
    assert downstream.logs == [ ( 'info', 'blocking', None ) ]


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_400_resource_changes_relayed( ):
    ''' An upstream's update of a resource reaches the clients subscribed
        to it (not for other resources); its new list of resources reaches
        the clients which listed them.
    '''
    upstream = invocables.mcp.produce_ensemble(
        'relay', command = [ mcp_support.SERVERS_PYTHON, _RELAY ] )
    server = serving.ToolServer( [ upstream ] )
    notices = [ ]
    arrival = asyncio.Event( )

    async def on_message( message ):
        message = getattr( message, 'root', message )
        if isinstance( message, types.ResourceUpdatedNotification ):
            notices.append( str( message.params.uri ) )
        elif isinstance( message, types.ResourceListChangedNotification ):
            notices.append( 'list' )
        else: return
        arrival.set( )

    async def wait_notice( ):
        await asyncio.wait_for( arrival.wait( ), 10 )
        arrival.clear( )

    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), message_handler = on_message,
            mode = 'legacy', # resources/subscribe: the handshake's versions
        ) as client:
            resources = ( await client.list_resources( ) ).resources
            assert [ str( item.uri ) for item in resources ] == [
                'test://relay/one' ]
            await client.subscribe_resource( 'test://relay/one' )
            await client.call_tool( 'touch', { 'uri': 'test://other' } )
            await client.call_tool( 'touch', { 'uri': 'test://relay/one' } )
            await wait_notice( )
            await client.call_tool( 'renew', { } )
            await wait_notice( )
    assert notices == [ 'test://relay/one', 'list' ]


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_410_clashing_uris_scoped( ):
    ''' Two upstreams offering one URI: each is served scoped by its
        ensemble (``alpha+test://...``), and reading, subscribing and
        updates reach the right one, under the scoped URI.
    '''
    server = serving.ToolServer( [
        invocables.mcp.produce_ensemble(
            name, command = [
                mcp_support.SERVERS_PYTHON, _RELAY, '--label', name ] )
        for name in ( 'alpha', 'beta' ) ] )
    updates = [ ]
    arrival = asyncio.Event( )

    async def on_message( message ):
        message = getattr( message, 'root', message )
        if not isinstance( message, types.ResourceUpdatedNotification ):
            return
        updates.append( str( message.params.uri ) )
        arrival.set( )

    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), message_handler = on_message,
            mode = 'legacy', # resources/subscribe: the handshake's versions
        ) as client:
            resources = ( await client.list_resources( ) ).resources
            assert [ str( item.uri ) for item in resources ] == [
                'alpha+test://relay/one', 'beta+test://relay/one' ]
            result = await client.read_resource( 'beta+test://relay/one' )
            assert result.contents[ 0 ].text == 'beta'
            assert str( result.contents[ 0 ].uri ) == (
                'beta+test://relay/one' )
            await client.subscribe_resource( 'alpha+test://relay/one' )
            await client.call_tool(
                'beta__touch', { 'uri': 'test://relay/one' } )
            await client.call_tool(
                'alpha__touch', { 'uri': 'test://relay/one' } )
            await asyncio.wait_for( arrival.wait( ), 10 )
    assert updates == [ 'alpha+test://relay/one' ]


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_500_served_over_http( tmp_path ):
    ''' Through ``invocables serve --http``, to the SDK's client over
        streamable HTTP: the upstream's requests reach the client which
        made the call, on its call's stream, and its answers go back up.
    '''
    downstream = _Downstream( )
    result = await _consult_served( tmp_path, downstream )
    assert not sdk.access_field( result, 'is_error' ), result
    _verify_relayed( json.loads( result.content[ 0 ].text ), downstream )


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_510_stateless_refuses( tmp_path ):
    ''' Served statelessly, the client cannot be asked: the upstream gets
        an error for its elicitation and its sampling, and the call ends.
    '''
    downstream = _Downstream( )
    result = await _consult_served( tmp_path, downstream, '--stateless' )
    assert not sdk.access_field( result, 'is_error' ), result
    answers = json.loads( result.content[ 0 ].text )
    assert answers[ 'elicited' ].startswith( 'error ' )
    assert answers[ 'sampled' ].startswith( 'error ' )
    assert downstream.elicitations == downstream.samplings == [ ]


async def _consult_served( tmp_path, downstream, *arguments ):
    ( tmp_path / 'relay.toml' ).write_text(
        "[ensemble]\nname = 'relay'\n[mcp]\ncommand = [ {python}, {relay} ]"
        "\n".format(
            python = json.dumps( mcp_support.SERVERS_PYTHON ),
            relay = json.dumps( _RELAY ) ), encoding = 'utf-8' )
    configuration = tmp_path / 'invocables.toml'
    configuration.write_text(
        "[[ensembles]]\nsource = 'relay.toml'\n", encoding = 'utf-8' )
    port = mcp_support.select_port( )
    with mcp_support.serve_http( [
        sys.executable, '-m', 'invocables', 'serve', '--configuration',
        str( configuration ), '--http', '--port', str( port ), *arguments
    ], port ) as url:
        async with _open_http_client(
            url, **downstream.produce_callbacks( )
        ) as client:
            await client.set_logging_level( 'debug' )
            return await client.call_tool(
                'consult', { 'topic': 'tea' },
                progress_callback = downstream.on_progress )


@contextlib.asynccontextmanager
async def _open_http_client( url, **callbacks ):
    ''' Yields a client of the installed mcp SDK over streamable HTTP:
        2.x's ``Client``, or 1.x's session.
    '''
    if sdk.MAJOR >= 2:
        async with mcp_support.open_memory_client(
            url, **callbacks
        ) as client: yield client
        return
    callbacks.pop( 'mode', None )
    async with (
        sdk.http.AsyncClient( ) as http,
        sdk_http.open_streamable_http( url, http, None ) as streams,
        ClientSession( *streams, **callbacks ) as session,
    ):
        await session.initialize( )
        yield session


_SECRET = 'sk-relay-secret-7373'
_VARIABLE = 'INVOCABLES_TEST_RELAY_SECRET'


def _produce_confiding( **options ):
    return invocables.mcp.produce_ensemble(
        'relay', command = [ mcp_support.SERVERS_PYTHON, _RELAY ],
        environment = { 'RELAY_SECRET': f"env:{_VARIABLE}" }, **options )


def _verify_hidden( texts ):
    ''' Asserts that every text hides the secret (and shows its mark). '''
    for text in texts:
        assert _SECRET not in text
        assert '***' in text, text


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_600_relayed_requests_redacted( monkeypatch ):
    ''' A secret of the upstream server, which it puts into every text of
        an elicitation (message, schema) and of a sampling request
        (messages, system prompt, stop sequences, metadata, model hints),
        reaches the downstream client as ``***`` only; the answers still
        reach the upstream.
    '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    server = serving.ToolServer( [ _produce_confiding( ) ] )
    downstream = _Downstream( )
    samplings = [ ]

    async def on_sample( context, parameters ):
        samplings.append( parameters )
        return await downstream.on_sample( context, parameters )

    callbacks = downstream.produce_callbacks( ) | {
        'sampling_callback': on_sample }
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), **callbacks
        ) as client:
            result = await client.call_tool( 'confide', { } )
    assert not sdk.access_field( result, 'is_error' ), result
    answers = json.loads( result.content[ 0 ].text )
    assert answers[ 'elicited' ] == 'accept'
    assert answers[ 'sampled' ][ 'text' ] == 'a summary'
    ( message, schema ), = downstream.elicitations
    view = schema[ 'properties' ][ 'view' ]
    _verify_hidden( (
        message, schema[ 'title' ], view[ 'description' ], view[ 'default' ]
    ) )
    parameters, = samplings
    preferences = sdk.access_field( parameters, 'model_preferences' )
    _verify_hidden( (
        parameters.messages[ 0 ].content.text,
        sdk.access_field( parameters, 'system_prompt' ),
        *sdk.access_field( parameters, 'stop_sequences' ),
        parameters.metadata[ 'key' ],
        *( hint.name for hint in preferences.hints ) ) )


@pytest.mark.asyncio
async def test_610_own_callbacks_redacted( monkeypatch ):
    ''' Without a caller, the ensemble's own elicitor and sampler (which
        show the user, or send to a model) get the texts redacted; the
        URL a server asks to visit keeps its query.
    '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    requests = [ ]

    async def elicit( request ):
        requests.append( request )
        return { 'action': 'accept', 'content': { 'view': 'ok' } }

    async def sample( request ):
        requests.append( request )
        return { 'content': { 'type': 'text', 'text': 'fine' },
                 'model': 'local' }

    call = invocables.InvocationCanister(
        identifier = 'c1', name = 'confide', arguments = { } )
    upstream = _produce_confiding( elicitor = elicit, sampler = sample )
    async with upstream:
        results = await invocables.execute_invocations(
            [ call ], [ upstream ] )
    answers = json.loads( results[ 0 ].content[ 0 ].text )
    assert answers[ 'elicited' ] == 'accept'
    assert answers[ 'sampled' ][ 'text' ] == 'fine'
    elicitation, sampling = requests
    view = elicitation.schema[ 'properties' ][ 'view' ]
    _verify_hidden( (
        elicitation.message, elicitation.schema[ 'title' ],
        view[ 'description' ], view[ 'default' ] ) )
    _verify_hidden( (
        sampling.messages[ 0 ].content[ 0 ].text, sampling.system,
        *sampling.stop_sequences, *sampling.model_hints ) )


def test_620_visited_url_keeps_query( ):
    ''' A URL to visit loses its secrets, not the query the visit needs,
        even on the server's own host (where other text loses queries).
    '''
    redactor = redaction.Redactor(
        [ _SECRET ], [ 'auth.example.com' ] )
    url = f"https://auth.example.com/visit?session=abc&key={_SECRET}"
    assert redactor.redact_link( url ) == (
        'https://auth.example.com/visit?session=abc&key=***' )
    assert redactor.redact( url ) == (
        'https://auth.example.com/visit?session=***&key=***' )


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_630_relayed_deep_schema_refused( ):
    ''' An upstream's elicitation whose schema is nested hundreds of
        levels deep is not relayed: the downstream client is never asked,
        and the upstream gets an error which says why (the SDK 1.x refuses
        such a request itself first).
    '''
    hostile = str( mcp_support.SERVERS / 'hostile_rounds_server.py' )
    upstream = invocables.mcp.produce_ensemble(
        'hostile', command = [
            mcp_support.SERVERS_PYTHON, hostile, '--legacy', '--no-tasks' ],
        protocol = 'legacy' )
    server = serving.ToolServer( [ upstream ] )
    downstream = _Downstream( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), **downstream.produce_callbacks( )
        ) as client:
            result = await client.call_tool( 'deep_elicit', { 'depth': 300 } )
    assert downstream.elicitations == [ ]
    text = result.content[ 0 ].text
    assert text.startswith( 'error ' )
    if sdk.MAJOR >= 2: assert 'nested deeper than' in text

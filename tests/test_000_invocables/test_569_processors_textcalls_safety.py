# SPDX-License-Identifier: Apache-2.0

''' Safer reading of text calls: what stays text, whole and streamed.

    Objects with keys beyond a call's stay text; complete calls of tools
    not offered are read by processors (for the engine to refuse); format
    'strict' reads only tagged or fenced calls; a reply which carries
    native calls has its text calls dropped (their text too).
'''


import json

import pytest

import invocables

from invocables.processors import produce_processor, textcalls


_NAMES = ( 'add', 'get_weather' )


def _read_streamed( text, names = _NAMES, format_ = 'auto', **options ):
    reader = textcalls.TextCallsReader( names, format_, **options )
    texts, invocations = [ ], [ ]
    for start in range( 0, len( text ), 3 ):
        release = reader.feed( text[ start : start + 3 ] )
        texts.append( release.text )
        invocations.extend( release.invocations )
    release = reader.conclude( )
    texts.append( release.text )
    invocations.extend( release.invocations )
    return ''.join( texts ), invocations


def _read_both( text, names = _NAMES, format_ = 'auto', **options ):
    ''' Returns text and calls read whole; asserts streamed is the same. '''
    reading = textcalls.read_text_calls( text, names, format_, **options )
    calls = [ ( call.name, call.arguments ) for call in reading.invocations ]
    streamed_text, streamed = _read_streamed(
        text, names, format_, **options )
    assert streamed_text == reading.text
    assert [ ( call.name, call.arguments ) for call in streamed ] == calls
    return reading.text, calls


@pytest.mark.parametrize( 'key', [ 'result', 'output', 'response', 'note' ] )
def test_100_extra_keys_stay_text( key ):
    ''' An object with a key beyond a call's (a model reciting a call and
        its result) stays text, whole and streamed, bare and fenced.
    '''
    value = { 'name': 'add', 'arguments': { 'a': 1, 'b': 2 }, key: 3 }
    for text in (
        json.dumps( value ), f"```json\n{json.dumps( value )}\n```",
        f"Done: {json.dumps( value )}",
    ):
        shown, calls = _read_both( text )
        assert calls == [ ]
        assert shown == text


def test_110_call_keys_read( ):
    ''' Objects of a call's keys only are calls: ``type`` of 'function'
        and a textual ``id`` are allowed; another ``type`` is text.
    '''
    text = json.dumps( {
        'type': 'function', 'id': 'x1', 'name': 'add',
        'arguments': { 'a': 1, 'b': 2 } } )
    assert _read_both( text )[ 1 ] == [ ( 'add', { 'a': 1, 'b': 2 } ) ]
    other = json.dumps( {
        'type': 'example', 'name': 'add', 'arguments': { 'a': 1 } } )
    assert _read_both( other ) == ( other, [ ] )


def test_120_unknown_names( ):
    ''' Complete calls of tools not offered are read with ``unknown`` (as
        processors read), JSON and tagged; not by default; a pythonic
        call of an unknown name stays text either way.
    '''
    call = '{"name": "send_email", "arguments": {"to": "bob"}}'
    assert _read_both( call ) == ( call, [ ] )
    assert _read_both( call, unknown = True ) == (
        '', [ ( 'send_email', { 'to': 'bob' } ) ] )
    tagged = f"<tool_call>{call}</tool_call>"
    assert _read_both( tagged, unknown = True )[ 1 ] == [
        ( 'send_email', { 'to': 'bob' } ) ]
    pythonic = "[send_email(to='bob')]"
    assert _read_both( pythonic, unknown = True ) == ( pythonic, [ ] )
    odd = '{"name": "no such tool!", "arguments": {}}'
    assert _read_both( odd, unknown = True ) == ( odd, [ ] )


def test_130_strict_format( ):
    ''' Format 'strict' reads calls only in tags or code fences, never
        bare in prose; whole and streamed alike.
    '''
    call = '{"name": "add", "arguments": {"a": 1, "b": 2}}'
    bare = f"Here is how it looks: {call}"
    assert _read_both( bare, format_ = 'strict' ) == ( bare, [ ] )
    assert _read_both( bare )[ 1 ] == [ ( 'add', { 'a': 1, 'b': 2 } ) ]
    for text in (
        f"<tool_call>{call}</tool_call>", f"```json\n{call}\n```",
        f"[TOOL_CALLS][{call}]",
        '<|python_start|>[add(a=1, b=2)]<|python_end|>',
    ):
        assert _read_both( text, format_ = 'strict' )[ 1 ] == [
            ( 'add', { 'a': 1, 'b': 2 } ) ], text
    after = f"```json\n{call}\n```\nthen {call}"
    shown, calls = _read_both( after, format_ = 'strict' )
    assert calls == [ ( 'add', { 'a': 1, 'b': 2 } ) ]
    assert call in shown
    pythonic = '[add(a=1, b=2)]'
    assert _read_both( pythonic, format_ = 'strict' ) == ( pythonic, [ ] )


def _prepare( provider ):
    def add( a: int, b: int ) -> int:
        ''' Returns sum. '''
        return a + b
    processor = produce_processor( provider, text_calls = 'auto' )
    processor.prepare_tools(
        [ invocables.produce_ensemble( 'math', [ add ] ) ] )
    return processor


_TEXT = '{"name": "add", "arguments": {"a": 1, "b": 2}}'
_NATIVE = {
    'id': 'call_n', 'type': 'function',
    'function': { 'name': 'add', 'arguments': '{"a": 1, "b": 2}' } }


def _drain( accumulator, events ):
    invocations = [ ]
    for event in events: invocations.extend( accumulator.ingest( event ) )
    invocations.extend( accumulator.conclude( ) )
    return invocations


_OVERLONG = (
    '[add(a=0x' + 'f' * 5000 + ', b=1)]',
    '[add(a=[1, -0b' + '1' * 20000 + '], b=1)]',
    '[add(a=-0o' + '7' * 6000 + ' + 1j, b=1)]',
    '[add(a=' + '9' * 5000 + ', b=1)]',
    '{"name": "add", "arguments": {"a": ' + '9' * 5000 + ', "b": 1}}',
)


@pytest.mark.parametrize( 'text', _OVERLONG )
def test_140_overlong_integers_refused( text ):
    ''' A call whose arguments hold an integer too long to read (in any
        base, at any depth, pythonic or JSON) is read as an invalid call
        of its tool with a reason for the model, whole and streamed, and
        the processors of local models read it so too.
    '''
    reading = textcalls.read_text_calls( text, _NAMES )
    assert [ call.name for call in reading.invocations ] == [ 'add' ]
    invalidity = reading.invocations[ 0 ].invalidity
    assert isinstance( invalidity, str )
    assert 'integer of more than' in invalidity
    assert reading.invocations[ 0 ].arguments == { }
    _, streamed = _read_streamed( text )
    assert [ call.invalidity for call in streamed ] == [ invalidity ]
    invocations = _prepare( 'ollama' ).normalize_invocations( {
        'model': 'qwen', 'done': True,
        'message': { 'role': 'assistant', 'content': text } } )
    assert [ call.invalidity for call in invocations ] == [ invalidity ]


def test_200_natives_win_chat( ):
    ''' A Chat reply with native calls and the same call as text runs the
        native call only, whole and streamed; the text call's text is
        dropped too.
    '''
    processor = _prepare( 'openai' )
    completion = { 'choices': [ { 'index': 0, 'finish_reason': 'tool_calls',
        'message': { 'role': 'assistant', 'content': _TEXT,
                     'tool_calls': [ _NATIVE ] } } ] }
    invocations = processor.normalize_invocations( completion )
    assert [ call.identifier for call in invocations ] == [ 'call_n' ]
    message = processor.prepare_message( completion )
    assert message[ 'content' ] is None
    assert [ call[ 'id' ] for call in message[ 'tool_calls' ] ] == [ 'call_n' ]
    accumulator = processor.produce_accumulator( )
    chunks = [
        { 'choices': [ { 'index': 0, 'delta': { 'content': _TEXT } } ] },
        { 'choices': [ { 'index': 0, 'delta': { 'tool_calls': [
            dict( _NATIVE, index = 0 ) ] } } ] },
        { 'choices': [ { 'index': 0, 'delta': { },
                         'finish_reason': 'tool_calls' } ] },
    ]
    streamed = _drain( accumulator, chunks )
    assert [ call.identifier for call in streamed ] == [ 'call_n' ]
    assert accumulator.produce_message( ) == message
    assert accumulator.release_text( ) == ''


def test_210_natives_win_responses_ollama( ):
    ''' Responses and Ollama replies with native calls drop their text
        calls, whole and streamed.
    '''
    processor = _prepare( 'openai-responses' )
    output = [
        { 'type': 'message', 'role': 'assistant', 'content': [
            { 'type': 'output_text', 'text': _TEXT } ] },
        { 'type': 'function_call', 'call_id': 'call_n', 'name': 'add',
          'arguments': '{"a": 1, "b": 2}' } ]
    invocations = processor.normalize_invocations( { 'output': output } )
    assert [ call.identifier for call in invocations ] == [ 'call_n' ]
    items = processor.prepare_message( { 'output': output } )
    assert [ item[ 'type' ] for item in items ] == [ 'function_call' ]
    ollama = _prepare( 'ollama' )
    body = { 'done': True, 'message': {
        'role': 'assistant', 'content': _TEXT, 'tool_calls': [
            { 'function': { 'name': 'add', 'arguments': { 'a': 1, 'b': 2 } } }
        ] } }
    assert len( ollama.normalize_invocations( body ) ) == 1
    assert ollama.prepare_message( body )[ 'content' ] == ''
    accumulator = ollama.produce_accumulator( )
    streamed = _drain( accumulator, [
        { 'done': False, 'message': { 'role': 'assistant',
                                      'content': _TEXT } },
        dict( body, message = dict( body[ 'message' ], content = '' ) ) ] )
    assert len( streamed ) == 1
    assert accumulator.produce_message( ) == ollama.prepare_message( body )


def test_220_text_calls_alone_read( ):
    ''' Without native calls, the text call is read (whole and streamed),
        and its text leaves the message.
    '''
    processor = _prepare( 'openai' )
    completion = { 'choices': [ { 'index': 0, 'finish_reason': 'stop',
        'message': { 'role': 'assistant', 'content': f"Sure. {_TEXT}" } } ] }
    invocations = processor.normalize_invocations( completion )
    assert [ call.name for call in invocations ] == [ 'add' ]
    message = processor.prepare_message( completion )
    assert message[ 'content' ] == 'Sure.'
    accumulator = processor.produce_accumulator( )
    streamed = _drain( accumulator, [
        { 'choices': [ { 'index': 0, 'delta': {
            'content': f"Sure. {_TEXT}" } } ] },
        { 'choices': [ { 'index': 0, 'delta': { },
                         'finish_reason': 'stop' } ] } ] )
    assert [ call.name for call in streamed ] == [ 'add' ]
    assert accumulator.release_text( ) == 'Sure.'
    assert accumulator.produce_message( )[ 'content' ] == 'Sure.'


def test_230_natives_win_responses_stream( ):
    ''' A streamed Responses reply with a function call and a text call
        emits the function call only; its items are those of the whole
        reply: no message holding the call's JSON.
    '''
    processor = _prepare( 'openai-responses' )
    message = { 'type': 'message', 'id': 'msg_1', 'role': 'assistant',
                'status': 'completed', 'content': [
                    { 'type': 'output_text', 'text': _TEXT } ] }
    call = { 'type': 'function_call', 'id': 'fc_1', 'call_id': 'call_n',
             'name': 'add', 'arguments': '{"a": 1, "b": 2}',
             'status': 'completed' }
    events = [
        { 'type': 'response.output_item.added', 'output_index': 0,
          'item': dict( message, content = [ ], status = 'in_progress' ) },
        { 'type': 'response.output_text.delta', 'output_index': 0,
          'item_id': 'msg_1', 'content_index': 0, 'delta': _TEXT },
        { 'type': 'response.output_item.done', 'output_index': 0,
          'item': message },
        { 'type': 'response.output_item.added', 'output_index': 1,
          'item': dict( call, arguments = '', status = 'in_progress' ) },
        { 'type': 'response.function_call_arguments.done',
          'output_index': 1, 'item_id': 'fc_1',
          'arguments': call[ 'arguments' ] },
        { 'type': 'response.output_item.done', 'output_index': 1,
          'item': call },
        { 'type': 'response.completed', 'response': {
            'status': 'completed', 'output': [ message, call ] } },
    ]
    accumulator = processor.produce_accumulator( )
    streamed = _drain( accumulator, events )
    assert [ invocation.identifier for invocation in streamed ] == [
        'call_n' ]
    assert accumulator.release_text( ) == ''
    items = accumulator.produce_message( )
    assert [ item[ 'type' ] for item in items ] == [ 'function_call' ]
    assert items[ 0 ][ 'call_id' ] == 'call_n'
    whole = processor.prepare_message( { 'output': [ message, call ] } )
    assert [ item[ 'type' ] for item in whole ] == [ 'function_call' ]

# SPDX-License-Identifier: Apache-2.0

''' Results of MCP tool calls as content canisters. '''


from base64 import b64decode as _b64decode

import invocables.mcp.__ as __
import invocables.mcp.redaction as _redaction
import invocables.mcp._sdk as _sdk
from ._sdk import types as _mcp_types
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions
import invocables.schemata as _schemata


DATA_DEPTH_MAXIMUM = 64
''' Most levels of a server's error data kept, redacted; deeper, a
    redaction mark. '''
EXCERPT_LENGTH_MAXIMUM = 2000
''' Most characters of a server's text (its error, the account of its
    result's faults) which a message of the library quotes. '''

_REASON_LENGTH_MAXIMUM = 1000 # characters of a validator's reason shown
_REDACTOR_VACANT = _redaction.Redactor( )
_VALIDATORS_MAXIMUM = 4096 # output schemas whose validators are kept
# Field names of the installed SDK major (camelCase in 1.x): read directly,
# once per call.
_IS_ERROR = 'is_error' if _sdk.MAJOR >= 2 else 'isError' # noqa: PLR2004
_STRUCTURED_CONTENT = (
    'structured_content' if _sdk.MAJOR >= 2 # noqa: PLR2004
    else 'structuredContent' )


def produce_contents(
    result: _mcp_types.CallToolResult,
    redactor: _redaction.Redactor = _REDACTOR_VACANT,
) -> _canisters.ContentSequence:
    ''' Maps content blocks and structured content into canisters.

        Secrets of the server are redacted from every text. When the
        structured content only repeats the text (the same JSON, or an
        object whose one field holds the same text), it is given once: as
        structure in the first case, as text in the second.

        Raises :py:class:`invocables.exceptions.InvocationRefusal` with the
        text of the result when the server reports a tool error, so that the
        model receives an error result.
    '''
    if getattr( result, _IS_ERROR ):
        raise _exceptions.InvocationRefusal(
            _produce_error_text( result, redactor ) )
    blocks = result.content
    structure = getattr( result, _STRUCTURED_CONTENT )
    if structure is None:
        # The usual result: content blocks alone, often one.
        contents = (
            [ _produce_content( blocks[ 0 ] ) ] if len( blocks ) == 1
            else [ _produce_content( block ) for block in blocks ] )
    else:
        repeat = _find_repeat( blocks, structure )
        if repeat is _Repeats.Text: blocks = [
            block for block in blocks
            if not isinstance( block, _mcp_types.TextContent ) ]
        elif repeat is _Repeats.Structure: structure = None
        contents = [ _produce_content( block ) for block in blocks ]
        if structure is not None:
            contents.append( _canisters.StructureContent( data = structure ) )
    if redactor.is_vacant( ): return tuple( contents )
    return _redact_straddles( redactor, [
        _redact_content( redactor, item ) for item in contents ] )


def validate_result(
    result: _mcp_types.CallToolResult,
    server: str,
    name: str,
    schema: __.Absential[ __.Schema ],
    redactor: _redaction.Redactor = _REDACTOR_VACANT,
) -> None:
    ''' Checks structured content of result against tool's output schema.

        The library's check, not the SDK's (see
        :py:class:`invocables.mcp._sdk.ClientSession`): its patterns run on
        RE2, or on ``regex`` within
        :py:data:`invocables.schemata.PATTERNS_TIMEOUT`, so that no schema
        can stall the event loop. A tool without an output schema, and an
        error result, pass unchecked. Raises
        :py:class:`invocables.exceptions.InvocationRefusal` (an error result
        for the model) when a tool which declares an output schema returns
        no structured content, or content which breaks the schema (or whose
        check took too long), or when the schema itself is not valid.
    '''
    if __.is_absent( schema ) or getattr( result, _IS_ERROR ): return
    structure = getattr( result, _STRUCTURED_CONTENT )
    if structure is None:
        reason = (
            "it declares an output schema, but its result has no "
            "structured content" )
    else:
        validator = _access_validator( name, schema )
        if isinstance( validator, str ): reason = validator
        else:
            try: validator.validate_arguments( structure )
            except _exceptions.ArgumentsInvalidity as exception:
                reason = f"its structured content {exception.reason}"
            except Exception as exception: # unresolvable references
                reason = (
                    "its structured content cannot be checked against its "
                    f"output schema ({type( exception ).__name__})" )
            else: return
    reason = produce_excerpt(
        reason, redactor.redact, maximum = _REASON_LENGTH_MAXIMUM )
    raise _exceptions.InvocationRefusal( redactor.redact(
        f"Server {server!r} returned a result which breaks its own "
        f"declaration: tool {name!r}: {reason}" ) )


def produce_call_refusal(
    ensemble: str,
    tool: str,
    exception: _sdk.Error,
    redactor: _redaction.Redactor,
) -> _exceptions.InvocationRefusal:
    ''' Returns refusal of a call which the server refused (exception,
        the SDK's error): its message redacted and abbreviated, its code.
        The refusal's cause is exception's redacted stand-in (see
        :py:func:`produce_cause`).
    '''
    error = exception.error
    message = produce_excerpt( error.message, redactor.redact )
    refusal = _exceptions.InvocationRefusal(
        f"Server {ensemble!r} refused the call of tool {tool!r}: "
        f"{message} (code {error.code})." )
    refusal.__cause__ = produce_cause( exception, redactor.redact )
    return refusal


def produce_cause(
    exception: BaseException, redact: __.cabc.Callable[ [ str ], str ]
) -> BaseException:
    ''' Returns what may stand as the cause (or context) of an error of
        the library which exception brought about, so that no traceback
        shows a server's text as the server gave it.

        An exception of the library is itself (its text is redacted when
        it is made). Any other (the SDK's error, pydantic's account of a
        result out of shape) is replaced by a stand-in which carries its
        text redacted, not abbreviated, and has no cause, context or
        traceback: the SDK's error of the same code with its message and
        data redacted, or an exception of its builtin kind
        (``RuntimeError``, ``ValueError``, else ``Exception``).
    '''
    if isinstance( exception, _exceptions.Omniexception ): return exception
    if isinstance( exception, _sdk.Error ):
        error = exception.error
        return _sdk.produce_error(
            error.code, redact( error.message ),
            _redaction.redact_json(
                redact, error.data, DATA_DEPTH_MAXIMUM ) )
    text = redact( str( exception ) )
    for kind in ( RuntimeError, ValueError ):
        if isinstance( exception, kind ): return kind( text )
    return Exception( text )


def produce_flaw_refusal(
    ensemble: str, redactor: __.typx.Any, exception: Exception
) -> _exceptions.Omnierror:
    ''' Returns refusal of a call whose result the SDK found amiss
        (exception), redacted and abbreviated (an account of thousands of
        faults is long); an exception of the library, raised on the way
        (input required beyond bounds, a task which did not complete), as
        it is. The refusal's cause is exception's redacted stand-in (see
        :py:func:`produce_cause`).
    '''
    if isinstance( exception, _exceptions.Omnierror ): return exception
    flaw = (
        'breaks its own declaration' if isinstance( exception, RuntimeError )
        else 'is not a valid MCP result' )
    cause = produce_cause( exception, redactor.redact )
    account = produce_excerpt( str( cause ) )
    refusal = _exceptions.InvocationRefusal( redactor.redact(
        f"Server {ensemble!r} returned a result which {flaw}: "
        f"{account}" ) )
    refusal.__cause__ = cause
    return refusal


def produce_content( block: __.typx.Any ) -> _canisters.Content:
    ''' Maps one MCP content block into a canister (authorization). '''
    return _produce_content( block )


def produce_excerpt(
    text: str,
    redact: __.cabc.Callable[ [ str ], str ] | None = None,
    quote: __.cabc.Callable[ [ str ], str ] = str,
    maximum: int = EXCERPT_LENGTH_MAXIMUM,
) -> str:
    ''' Returns server's text redacted, then quoted and abbreviated to
        its first maximum characters, with its length: no bound cuts a
        secret. Every message which quotes what a server says bounds it
        so, and so gets it sendable (see
        :py:func:`invocables.canisters.normalize_text`): such a message
        may go out (an error of ``serve``). '''
    if redact is not None: text = redact( text )
    return __.values.abbreviate(
        _canisters.normalize_text( text ), maximum, quote )


def redact_content(
    redactor: _redaction.Redactor, content: _canisters.Content
) -> _canisters.Content:
    ''' Returns content with secrets redacted from its texts and binary
        data (resources, prompts, sampling, authorization). '''
    return _redact_content( redactor, content )


class _Repeats( __.enum.Enum ):
    ''' Which part of a result repeats the other. '''

    Nothing = 'nothing'
    Structure = 'structure'     # structure wraps the text in one field
    Text = 'text'               # text is the JSON of the structure


_validators: dict[
    int, tuple[ __.Schema, '_schemata.Validator | str' ] ] = { }


def _access_validator(
    name: str, schema: __.Schema
) -> _schemata.Validator | str:
    ''' Returns validator of output schema, compiled once per schema, or
        why the schema is not valid. '''
    entry = _validators.get( id( schema ) )
    if entry is not None and entry[ 0 ] is schema: return entry[ 1 ]
    validator: _schemata.Validator | str
    try: validator = _schemata.produce_validator( name, schema )
    except _exceptions.SchemaInvalidity as exception:
        validator = f"its output schema is not valid ({exception})"
    if len( _validators ) >= _VALIDATORS_MAXIMUM: _validators.clear( )
    _validators[ id( schema ) ] = ( schema, validator )
    return validator


def _decode( data: str ) -> bytes:
    return _b64decode( data, validate = False )


def _produce_content( block: __.typx.Any ) -> _canisters.Content:
    match block:
        case _mcp_types.TextContent( ):
            return _canisters.TextContent( text = block.text )
        case _mcp_types.ImageContent( ):
            return _canisters.ImageContent(
                data = _decode( block.data ),
                media_type = _sdk.access_field( block, 'mime_type' ) )
        case _mcp_types.AudioContent( ):
            return _canisters.AudioContent(
                data = _decode( block.data ),
                media_type = _sdk.access_field( block, 'mime_type' ) )
        case _mcp_types.EmbeddedResource( ):
            return _produce_resource( block.resource )
        case _mcp_types.ResourceLink( ):
            return _canisters.ResourceLinkContent(
                uri = str( block.uri ),
                name = block.name,
                description = _absentify( block.description ),
                media_type = _absentify(
                    _sdk.access_field( block, 'mime_type' ) ) )
        case _: # future block kinds: keep them visible as JSON
            return _canisters.StructureContent(
                data = block.model_dump( mode = 'json', by_alias = True ) )


def _produce_resource( resource: __.typx.Any ) -> _canisters.Content:
    media_type = _absentify( _sdk.access_field( resource, 'mime_type' ) )
    if isinstance( resource, _mcp_types.TextResourceContents ):
        return _canisters.ResourceContent(
            uri = str( resource.uri ), media_type = media_type,
            text = resource.text )
    return _canisters.ResourceContent(
        uri = str( resource.uri ), media_type = media_type,
        data = _decode( resource.blob ) )


def _find_repeat(
    blocks: __.cabc.Sequence[ __.typx.Any ],
    structure: __.cabc.Mapping[ str, __.typx.Any ],
) -> _Repeats:
    ''' Tells whether the only text block and the structure repeat. '''
    texts = [
        block.text for block in blocks
        if isinstance( block, _mcp_types.TextContent ) ]
    if len( texts ) != 1: return _Repeats.Nothing
    text = texts[ 0 ]
    if len( structure ) == 1 and next( iter( structure.values( ) ) ) == text:
        return _Repeats.Structure
    if not text.lstrip( ).startswith( ( '{', '[' ) ): return _Repeats.Nothing
    try: data = __.json.loads( text )
    except ( ValueError, RecursionError ): return _Repeats.Nothing
    return _Repeats.Text if data == structure else _Repeats.Nothing


def _redact_content(
    redactor: _redaction.Redactor, content: _canisters.Content
) -> _canisters.Content:
    ''' Returns content with secrets redacted from every text it holds:
        its text, data, URI, name, description, media type; and from its
        binary data (see :py:func:`_redact_bytes`). '''
    redact = redactor.redact
    match content:
        case _canisters.TextContent( ):
            return _canisters.TextContent( text = redact( content.text ) )
        case _canisters.StructureContent( ):
            return _canisters.StructureContent(
                data = redactor.redact_data( content.data ) )
        case _canisters.ImageContent( ) | _canisters.AudioContent( ):
            return __.dcls.replace(
                content, media_type = redact( content.media_type ),
                data = _redact_bytes( redact, content.data ) )
        case _canisters.ResourceContent( ):
            data = content.data
            return __.dcls.replace(
                content, uri = redact( content.uri ),
                media_type = _redact_optional( redact, content.media_type ),
                text = _redact_optional( redact, content.text ),
                data = data if __.is_absent( data )
                else _redact_bytes( redact, data ) )
        case _canisters.ResourceLinkContent( ):
            return __.dcls.replace(
                content, uri = redact( content.uri ),
                name = _redact_optional( redact, content.name ),
                description = _redact_optional(
                    redact, content.description ),
                media_type = _redact_optional( redact, content.media_type ) )
        case _: return content


def _redact_bytes(
    redact: __.cabc.Callable[ [ str ], str ], data: bytes
) -> bytes:
    ''' Returns binary data (a blob, decoded from its base64) with every
        secret replaced as in text, the bytes read as UTF-8 (those which
        are not, kept as they are): a document sent as binary (JSON, a
        configuration file) loses the secrets it holds, in every form
        which the redactor knows, wherever they stand (as the cores of
        their base64 would find them in the blob, at every alignment).
        The same bytes if it holds none.
    '''
    text = data.decode( 'utf-8', 'surrogateescape' )
    redacted = redact( text )
    if redacted == text: return data
    return redacted.encode( 'utf-8', 'surrogateescape' )


def _redact_optional(
    redact: __.cabc.Callable[ [ str ], str ], value: __.Absential[ str ]
) -> __.Absential[ str ]:
    return value if __.is_absent( value ) else redact( value )


def _redact_straddles(
    redactor: _redaction.Redactor, contents: list[ _canisters.Content ]
) -> _canisters.ContentSequence:
    ''' Returns contents with every secret which straddles two texts
        (in order, other contents aside) redacted in both: a processor
        which joins texts would give it whole. '''
    places: list[ int ] = [ ]
    texts: list[ str ] = [ ]
    for index, item in enumerate( contents ):
        if isinstance( item, _canisters.TextContent ):
            places.append( index )
            texts.append( item.text )
    if len( texts ) < 2: return tuple( contents ) # noqa: PLR2004
    redacted = _redaction.redact_straddles( redactor, texts )
    for index, text, original in zip( places, redacted, texts ):
        if text is not original:
            contents[ index ] = _canisters.TextContent( text = text )
    return tuple( contents )


def _produce_error_text(
    result: _mcp_types.CallToolResult, redactor: _redaction.Redactor
) -> str:
    ''' Returns texts of error result, each redacted, then those which
        a secret straddles, joined. '''
    texts = [
        redactor.redact( block.text ) for block in result.content
        if isinstance( block, _mcp_types.TextContent ) ]
    texts = _redaction.redact_straddles( redactor, texts )
    text = '\n'.join( texts ).strip( )
    return text or "The tool reported an error without a message."


def _absentify( value: str | None ) -> __.Absential[ str ]:
    return __.absent if value is None else value

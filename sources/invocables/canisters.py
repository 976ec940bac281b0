# SPDX-License-Identifier: Apache-2.0

''' Normalized tool calls, tool results and kinds of result content.

    Canisters are made for every invocation, so they are plain frozen,
    slotted dataclasses rather than frigid objects (which cost about ten times
    as much to construct): see the architecture decision on canisters.

    What goes out is sendable, and this module is its one owner: every text
    of a result (text content, structured data with its keys, URIs, names,
    error messages) is made valid Unicode, which every provider's SDK can
    encode as UTF-8, when its content is made (:py:func:`validate_content`,
    which the execution engine applies to every result of every kind of
    tool, and the constructor of :py:class:`ResultCanister`); see
    :py:func:`normalize_text`. Names shown in listings go through
    :py:func:`render_name`, which also escapes what could forge the
    structure of a listing (line breaks and other control characters).
'''


from datetime import datetime as _datetime
from datetime import timezone as _timezone

import invocables.__ as __
import invocables._texts as _texts
import invocables.exceptions as _exceptions


RESULTS_DEPTH_MAXIMUM_DEFAULT = __.values.RESULTS_DEPTH_MAXIMUM
RESULTS_SIZE_MAXIMUM_DEFAULT = __.values.RESULTS_SIZE_MAXIMUM

_FIELDS_TEXTUAL = ( 'description', 'media_type', 'name', 'text', 'uri' )
_SCALARS_FLAT = frozenset( ( bool, int, float, type( None ) ) )
# The exact type of a value typed Any, without narrowing it to a partly
# unknown type: hot paths check values this way, with no casts.
_access_genus: __.cabc.Callable[ [ object ], object ] = type
_image_signatures = (
    ( b'\x89PNG\r\n\x1a\n', 'image/png' ),
    ( b'\xff\xd8\xff', 'image/jpeg' ),
    ( b'GIF87a', 'image/gif' ),
    ( b'GIF89a', 'image/gif' ),
)


class ContentGenera( __.enum.Enum ):
    ''' Kinds of content in tool results. '''

    Audio = 'audio'
    Image = 'image'
    Resource = 'resource'
    ResourceLink = 'resource-link'
    Structure = 'structure'
    Text = 'text'


class FaultGenera( __.enum.Enum ):
    ''' Kinds of faults reported to the model in error results. '''

    Absence = 'absence'             # unknown tool name
    Cancellation = 'cancellation'   # invocation cancelled
    Connection = 'connection'       # ensemble (server) unavailable
    Failure = 'failure'             # tool raised; reported by policy
    Invalidity = 'invalidity'       # arguments not JSON or not valid
    Refusal = 'refusal'             # tool reported an error itself
    Timeout = 'timeout'             # tool exceeded its timeout


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class TextContent:
    ''' Text content. '''

    text: str
    genus: __.typx.ClassVar[ ContentGenera ] = ContentGenera.Text


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ImageContent:
    ''' Image content: raw bytes and their media type. '''

    data: bytes
    media_type: str
    genus: __.typx.ClassVar[ ContentGenera ] = ContentGenera.Image


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class AudioContent:
    ''' Audio content: raw bytes and their media type. '''

    data: bytes
    media_type: str
    genus: __.typx.ClassVar[ ContentGenera ] = ContentGenera.Audio


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class StructureContent:
    ''' Structured content: a JSON-compatible value. '''

    data: __.typx.Any
    genus: __.typx.ClassVar[ ContentGenera ] = ContentGenera.Structure


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ResourceContent:
    ''' Embedded resource: text or bytes, with its URI. '''

    uri: str
    media_type: __.Absential[ str ] = __.absent
    text: __.Absential[ str ] = __.absent
    data: __.Absential[ bytes ] = __.absent
    genus: __.typx.ClassVar[ ContentGenera ] = ContentGenera.Resource


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ResourceLinkContent:
    ''' Link to a resource which the application may retrieve. '''

    uri: str
    name: __.Absential[ str ] = __.absent
    description: __.Absential[ str ] = __.absent
    media_type: __.Absential[ str ] = __.absent
    genus: __.typx.ClassVar[ ContentGenera ] = ContentGenera.ResourceLink


Content: __.typx.TypeAlias = (
    TextContent | ImageContent | AudioContent | StructureContent
    | ResourceContent | ResourceLinkContent )
ContentSequence: __.typx.TypeAlias = tuple[ Content, ... ]
_content_classes = (
    TextContent, ImageContent, AudioContent, StructureContent,
    ResourceContent, ResourceLinkContent )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class Fault:
    ''' Why an invocation produced an error result. '''

    genus: FaultGenera
    message: str


@__.dcls.dataclass(
    frozen = True, slots = True, kw_only = True, init = False )
class InvocationCanister:
    ''' Normalized tool call, as extracted from a provider response.

        ``name`` is the provider-facing name. ``invalidity`` is set when the
        arguments could not be decoded (for example, text that is not JSON):
        such an invocation is never run; the model receives an error result.
        ``identifier_synthesized`` tells that the provider sent no id and the
        library made one (some providers must not get it back).
    '''

    identifier: str
    name: str
    arguments: __.Arguments
    timestamp: _datetime
    invalidity: __.Absential[ str ]
    identifier_synthesized: bool

    def __init__(
        self, *,
        identifier: str,
        name: str,
        arguments: __.Arguments,
        timestamp: __.Absential[ _datetime ] = __.absent,
        invalidity: __.Absential[ str ] = __.absent,
        identifier_synthesized: bool = False,
    ):
        # By hand, as ResultCanister: one per tool call, on the hot path.
        ( set_identifier, set_name, set_arguments, set_timestamp,
          set_invalidity, set_synthesized ) = _INVOCATION_SETTERS
        set_identifier( self, identifier )
        set_name( self, name )
        set_arguments( self, arguments )
        set_timestamp( self, (
            _datetime.now( _timezone.utc )
            if timestamp is __.absent else timestamp ) )
        set_invalidity( self, invalidity )
        set_synthesized( self, identifier_synthesized )


@__.dcls.dataclass(
    frozen = True, slots = True, kw_only = True, init = False )
class ResultCanister:
    ''' Normalized tool result, one per invocation.

        ``content`` is a tuple of content canisters; one content canister,
        or a list of them, is taken as well (as the design documents write
        ``content = TextContent( ... )``). Its texts, the error's message,
        the invocation's id and the name are made sendable (see
        :py:func:`normalize_text`): ids and names come from the model.
        ``error`` is absent when the invocation succeeded. ``timestamp``
        is a timezone-aware datetime, now unless given. ``name`` is the
        provider-facing name of the invoked tool (some providers need it).
        ``invocation_id_synthesized`` is the invocation's
        ``identifier_synthesized``.
    '''

    invocation_id: str
    content: ContentSequence
    error: __.Absential[ Fault ]
    timestamp: _datetime
    name: str
    invocation_id_synthesized: bool

    def __init__(
        self, *,
        invocation_id: str,
        content: ContentSequence | Content | __.cabc.Sequence[ Content ] = (
            ),
        error: __.Absential[ Fault ] = __.absent,
        timestamp: __.Absential[ _datetime ] = __.absent,
        name: str = '',
        invocation_id_synthesized: bool = False,
    ):
        ( set_identifier, set_content, set_error, set_timestamp,
          set_name, set_synthesized ) = _RESULT_SETTERS
        set_identifier( self, (
            invocation_id if invocation_id.isascii( )
            else normalize_text( invocation_id ) ) )
        if type( content ) is not tuple:
            content = (
                ( content, ) if is_content( content )
                else tuple( __.typx.cast(
                    __.cabc.Sequence[ Content ], content ) ) )
        set_content( self, _normalize_content(
            __.typx.cast( ContentSequence, content ) ) )
        set_error( self, (
            error if __.is_absent( error ) or error.message.isascii( )
            else _normalize_fault( error ) ) )
        set_timestamp( self, (
            _datetime.now( _timezone.utc )
            if timestamp is __.absent else timestamp ) )
        # The name comes from the model: it may even be no text.
        set_name( self, (
            name if not isinstance( name, str ) or name.isascii( )
            else normalize_text( name ) ) )
        set_synthesized( self, invocation_id_synthesized )

    def as_text( self ) -> str:
        ''' Returns text rendering of result, for text-only providers. '''
        texts = [ render_content_text( item ) for item in self.content ]
        if not __.is_absent( self.error ):
            texts.insert( 0, f"Error: {self.error.message}" )
        return '\n'.join( texts )

    def is_error( self ) -> bool:
        ''' Returns whether result reports an error. '''
        return not __.is_absent( self.error )


# Constructors above set slots by their own setters: see produce_slot_setters.
_INVOCATION_SETTERS = __.produce_slot_setters(
    InvocationCanister, (
        'identifier', 'name', 'arguments', 'timestamp', 'invalidity',
        'identifier_synthesized' ) )
_new = object.__new__
_RESULT_SETTERS = __.produce_slot_setters(
    ResultCanister, (
        'invocation_id', 'content', 'error', 'timestamp', 'name',
        'invocation_id_synthesized' ) )


def produce_result(
    invocation_id: str, content: ContentSequence, name: str
) -> ResultCanister:
    ''' Returns result of invocation which succeeded, stamped now.

        As the constructor with no error, for content already sealed (a
        tuple of content canisters, as :py:func:`validate_content` returns
        it: sendable), taken as it is: the execution engine's one result
        per call, at about half the constructor's cost.
    '''
    result = _new( ResultCanister )
    ( set_identifier, set_content, set_error, set_timestamp,
      set_name, set_synthesized ) = _RESULT_SETTERS
    set_identifier( result, (
        invocation_id if invocation_id.isascii( )
        else normalize_text( invocation_id ) ) )
    set_content( result, content )
    set_error( result, __.absent )
    set_timestamp( result, _datetime.now( _timezone.utc ) )
    set_name( result, name if name.isascii( ) else normalize_text( name ) )
    set_synthesized( result, False ) # noqa: FBT003
    return result


def is_content( value: object ) -> __.typx.TypeIs[ Content ]:
    ''' Returns whether value is a content canister. '''
    return isinstance( value, _content_classes )


normalize_data = _texts.normalize_data
normalize_text = _texts.normalize_text
render_name = _texts.render_name


def produce_arguments(
    name: str,
    arguments: object,
    depth_maximum: int,
    size_maximum: int | None = None,
) -> dict[ str, __.typx.Any ]:
    ''' Returns arguments of tool as a plain JSON object (a dict).

        ``None`` is an empty object; other mappings become dicts and tuples
        lists; keys which are numbers, booleans or ``None`` become text (as
        ``json.dumps`` does). Plain arguments are returned as they are.
        Depth and size are counted as :py:func:`produce_json` does. Raises
        :py:class:`invocables.exceptions.ArgumentsInvalidity`, naming the
        tool and where, for arguments which are not a JSON object, hold
        values which are not JSON, or exceed the limits.
    '''
    if arguments is None: return { }
    if _is_flat( arguments, size_maximum ): return arguments
    if not isinstance( arguments, __.cabc.Mapping ):
        raise _exceptions.ArgumentsInvalidity(
            name, "the arguments must be a JSON object, not {genus}.".format(
                genus = _name_genus( arguments ) ) )
    walker = __.values.Walker(
        depth_maximum, size_maximum, lenient = False )
    value = __.typx.cast( object, arguments )
    try: return __.typx.cast(
        dict[ str, __.typx.Any ], walker.walk( value, 0 ) )
    except __.values.Flaw as flaw:
        raise _exceptions.ArgumentsInvalidity(
            name, f"{flaw.describe( )}." ) from None


def produce_content( value: object ) -> ContentSequence:
    ''' Normalizes value returned by a tool into content canisters.

        Strings become text; content canisters pass through; bytes with an
        image signature become images; ``None`` becomes no content; pydantic
        models and dataclasses become structured content, serialized by
        pydantic; any other value becomes structured content as it is, to
        be serialized by the execution engine (see :py:func:`produce_json`).

        Raises :py:class:`invocables.exceptions.ResultInvalidity` if a model
        or dataclass cannot be serialized.
    '''
    if value is None: return ( )
    if isinstance( value, str ): return ( TextContent( text = value ), )
    if is_content( value ): return ( value, )
    if isinstance( value, ( bytes, bytearray ) ):
        return ( _produce_content_from_bytes( bytes( value ) ), )
    data: object = value
    if isinstance( value, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        if items and all( is_content( item ) for item in items ):
            return tuple( __.typx.cast( __.cabc.Sequence[ Content ], items ) )
    return ( StructureContent( data = _jsonify( data ) ), )


def produce_json(
    value: object,
    depth_maximum: int = RESULTS_DEPTH_MAXIMUM_DEFAULT,
    size_maximum: int | None = None,
) -> object:
    ''' Returns value as plain JSON data: dicts, lists, text, numbers.

        Plain JSON is returned as it is, not copied. Other mappings become
        dicts; tuples and sets become lists; keys which are numbers, booleans
        or ``None`` become text (as ``json.dumps`` does); numbers which are
        not finite become ``None``; bytes become text, decoded leniently;
        anything else (dates, decimals, UUIDs, enums, pydantic models,
        dataclasses) is serialized by pydantic, imported only then.

        Depth counts nested arrays and objects; size counts the characters
        of every text and key, plus one for every value, which is close to
        the length of the JSON text. Raises
        :py:class:`invocables.exceptions.ResultInvalidity`, naming where,
        if value cannot be serialized or exceeds the limits.
    '''
    walker = __.values.Walker(
        depth_maximum, size_maximum, normalizer = normalize_text )
    try: return walker.walk( value, 0 )
    except __.values.Flaw as flaw:
        raise _exceptions.ResultInvalidity(
            flaw.describe( ) ) from flaw.__cause__


def render_content_text( content: Content ) -> str:
    ''' Renders content as text, with clear stand-ins for binary data. '''
    match content:
        case TextContent( ):
            return content.text
        case StructureContent( ):
            return _render_json( content.data )
        case ImageContent( ) | AudioContent( ):
            return (
                "[{genus}: {media_type}, {size} bytes, not shown]".format(
                    genus = content.genus.value,
                    media_type = content.media_type,
                    size = len( content.data ) ) )
        case ResourceContent( ):
            if not __.is_absent( content.text ): return content.text
            return "[resource {uri}: binary, not shown]".format(
                uri = content.uri )
        case ResourceLinkContent( ):
            return "[resource link: {uri}]".format( uri = content.uri )


def validate_content(
    content: object,
    depth_maximum: int = RESULTS_DEPTH_MAXIMUM_DEFAULT,
    size_maximum: int | None = RESULTS_SIZE_MAXIMUM_DEFAULT,
) -> ContentSequence:
    ''' Returns content ready to be sent: structured data as plain JSON,
        every text sendable.

        Content which is not a tuple of content canisters is first
        normalized by :py:func:`produce_content`. Structured data goes
        through :py:func:`produce_json`; every text (text content, keys
        and texts of structured data, URIs, names) through
        :py:func:`normalize_text`; the size of all items together
        (characters of text, bytes of binary data, size of JSON) is held to
        the maximum. Raises
        :py:class:`invocables.exceptions.ResultInvalidity` otherwise.
    '''
    if _is_text_alone( content, size_maximum ): # the common case
        return content
    items = (
        __.typx.cast( ContentSequence, content )
        if _is_content_sequence( content ) else produce_content( content ) )
    walker = __.values.Walker(
        depth_maximum, size_maximum, normalizer = normalize_text )
    sealed: list[ Content ] = [ ]
    try:
        for item in items:
            if not isinstance( item, StructureContent ):
                walker.count( _measure_content( item ) )
                sealed.append( _normalize_item( item ) )
                continue
            data = walker.walk( item.data, 0 )
            sealed.append( item if data is item.data else (
                StructureContent( data = data ) ) )
    except __.values.Flaw as flaw:
        raise _exceptions.ResultInvalidity(
            flaw.describe( ) ) from flaw.__cause__
    if all( new is old for new, old in zip( sealed, items ) ): return items
    return tuple( sealed )


def _jsonify( value: object ) -> object:
    ''' Serializes models and dataclasses; passes other values through. '''
    if not callable( getattr( value, 'model_dump', None ) ) and not (
        __.dcls.is_dataclass( value ) and not isinstance( value, type )
    ): return value
    return produce_json( value )


def _normalize_content( items: ContentSequence ) -> ContentSequence:
    ''' Returns content with its texts sendable; the same, if they are. '''
    for index, item in enumerate( items ):
        if isinstance( item, TextContent ) and item.text.isascii( ):
            continue # the common case, quickly
        item_ = _normalize_item( item )
        if item_ is not item:
            return (
                *items[ : index ], item_,
                *map( _normalize_item, items[ index + 1 : ] ) )
    return items


def _normalize_fault( fault: Fault ) -> Fault:
    message = normalize_text( fault.message )
    if message is fault.message: return fault
    return Fault( genus = fault.genus, message = message )


def _normalize_item( item: Content ) -> Content:
    ''' Returns content canister with its texts sendable; the same, if they
        are.
    '''
    if isinstance( item, TextContent ):
        text = item.text
        if text.isascii( ): return item
        text_ = normalize_text( text )
        return item if text_ is text else TextContent( text = text_ )
    if isinstance( item, StructureContent ):
        data = normalize_data( item.data )
        return item if data is item.data else StructureContent( data = data )
    changes: dict[ str, str ] = { }
    for name in _FIELDS_TEXTUAL:
        value: object = getattr( item, name, None )
        if type( value ) is not str: continue
        text = __.typx.cast( str, value )
        if text.isascii( ): continue
        text_ = normalize_text( text )
        if text_ is not text: changes[ name ] = text_
    if not changes: return item
    return __.dcls.replace( item, **changes )


def _produce_content_from_bytes( data: bytes ) -> Content:
    for signature, media_type in _image_signatures:
        if data.startswith( signature ):
            return ImageContent( data = data, media_type = media_type )
    if data[ : 4 ] == b'RIFF' and data[ 8 : 12 ] == b'WEBP':
        return ImageContent( data = data, media_type = 'image/webp' )
    return TextContent( text = data.decode( 'utf-8', errors = 'replace' ) )


def _is_flat(
    arguments: __.typx.Any, size_maximum: int | None
) -> __.typx.TypeGuard[ dict[ str, __.typx.Any ] ]:
    ''' Returns whether arguments are a dict of text keys to scalars,
        within size.

        The common case, checked without a walker.
    '''
    if _access_genus( arguments ) is not dict: return False
    size = 0
    for key, value in arguments.items( ):
        if type( key ) is not str: return False
        if type( value ) is str: size += len( value )
        elif type( value ) not in _SCALARS_FLAT: return False
        size += len( key ) + 2
    return size_maximum is None or size <= size_maximum


def _is_text_alone(
    content: __.typx.Any, size_maximum: int | None
) -> __.typx.TypeGuard[ tuple[ TextContent ] ]:
    ''' Returns whether content is one text within size. '''
    if _access_genus( content ) is not tuple or len( content ) != 1:
        return False
    item = content[ 0 ]
    if _access_genus( item ) is not TextContent: return False
    text = item.text
    if not text.isascii( ): # valid Unicode, else made so by the slow path
        try: text.encode( 'utf-8' )
        except UnicodeEncodeError: return False
    return size_maximum is None or len( text ) <= size_maximum


def _is_content_sequence( value: object ) -> bool:
    if type( value ) is not tuple: return False
    items = __.typx.cast( tuple[ object, ... ], value )
    return all( is_content( item ) for item in items )


def _measure_content( content: Content ) -> int:
    ''' Returns size of content which is not structured. '''
    size = 0
    for name in ( 'text', 'data', 'uri', 'name', 'description' ):
        value = getattr( content, name, None )
        if isinstance( value, ( str, bytes ) ): size += len( value )
    return size


def _name_genus( value: object ) -> str:
    if isinstance( value, ( list, tuple ) ): return 'a JSON array'
    if isinstance( value, str ): return 'a JSON string'
    if isinstance( value, bool ): return 'a JSON boolean'
    if isinstance( value, ( int, float ) ): return 'a JSON number'
    return f"a value of type {type( value ).__qualname__}"


def _render_json( data: object ) -> str:
    ''' Renders data as JSON text; never raises. '''
    try: return __.json.dumps( data, ensure_ascii = False, allow_nan = False )
    except ( TypeError, ValueError, RecursionError ): pass
    try: plain = produce_json( data )
    except _exceptions.ResultInvalidity as exception:
        return (
            "[structured content which cannot be shown as JSON: "
            "{reason}]".format( reason = exception.reason ) )
    return __.json.dumps( plain, ensure_ascii = False )

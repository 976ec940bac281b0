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

from . import __
from . import exceptions as _exceptions


RESULTS_DEPTH_MAXIMUM_DEFAULT = __.values.RESULTS_DEPTH_MAXIMUM
RESULTS_SIZE_MAXIMUM_DEFAULT = __.values.RESULTS_SIZE_MAXIMUM

_ESCAPES_SHORT = __.types.MappingProxyType( {
    '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' } )
_FIELDS_TEXTUAL = ( 'description', 'media_type', 'name', 'text', 'uri' )
_NORMALIZATION_DEPTH_MAXIMUM = RESULTS_DEPTH_MAXIMUM_DEFAULT
_SCALARS_FLAT = frozenset( ( bool, int, float, type( None ) ) )
# The exact type of a value typed Any, without narrowing it to a partly
# unknown type: hot paths check values this way, with no casts.
_access_genus: __.cabc.Callable[ [ object ], object ] = type
# Lone surrogates: what 'surrogateescape' makes of bytes which are not
# UTF-8 (U+DC80 to U+DCFF), or halves of UTF-16 pairs (from JSON's escapes).
# No UTF-8 encoder accepts them; a pair is one character, joined.
_surrogates = __.re.compile(
    r'[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]' )
# What a name in a listing may not hold as it is: what is not Unicode, the
# escape character itself, and what breaks or reorders lines (C0 and C1
# controls, DEL, line and paragraph separators, bidirectional controls).
_name_escapables = __.re.compile(
    r'[\ud800-\udbff][\udc00-\udfff]'
    r'|[\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e'
    r'\u2066-\u2069\ud800-\udfff]' )
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


def normalize_data( value: object ) -> object:
    ''' Returns JSON-like data whose keys and texts every UTF-8 encoder
        accepts (see :py:func:`normalize_text`); the same object when they
        all are.
    '''
    return _normalize_data( value, 0 )


def normalize_text( text: str ) -> str:
    ''' Returns text which every UTF-8 encoder accepts: text as it is, when
        it is valid Unicode (the common case, checked quickly).

        Lone surrogates, which no UTF-8 encoder accepts (what the
        ``surrogateescape`` error handler makes of bytes which are not
        UTF-8, as in file names, or halves of UTF-16 pairs from JSON's
        escapes), are shown as escapes: a byte as ``\\xff``, another half
        as ``\\udc00``. A pair of halves is joined into its character.
        Line breaks and other characters are kept: this is content; names
        in listings go through :py:func:`render_name`.
    '''
    if text.isascii( ): return text
    try: text.encode( 'utf-8' )
    except UnicodeEncodeError:
        return _surrogates.sub( _escape_surrogate, text )
    return text


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


def render_name( name: str ) -> str:
    ''' Renders name (of a file, a folder, any entry of a listing) on one
        line, sendable, and unambiguous.

        A backslash is doubled; tabs, line feeds and carriage returns are
        ``\\t``, ``\\n``, ``\\r``; other control characters (C0, DEL,
        C1), line and paragraph separators and bidirectional controls,
        which could forge or reorder lines of a listing, are ``\\x1b`` or
        ``\\u2028``; bytes which are not UTF-8 (lone surrogates of
        ``surrogateescape``) are ``\\xff``. Other names are returned as
        they are.
    '''
    if name.isascii( ) and name.isprintable( ) and '\\' not in name:
        return name
    return _name_escapables.sub( _escape_character, name )


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


def _escape_character( match: __.re.Match[ str ] ) -> str:
    ''' Returns escape of a character which a name may not hold as it is.
    '''
    text = match.group( )
    short = _ESCAPES_SHORT.get( text )
    if short is not None: return short
    code = ord( text[ 0 ] )
    if len( text ) > 1 or 0xd800 <= code <= 0xdfff: # noqa: PLR2004
        return _escape_surrogate( match )
    if code < 0x80: return "\\x{code:02x}".format( code = code ) # noqa: PLR2004
    return "\\u{code:04x}".format( code = code )


def _escape_surrogate( match: __.re.Match[ str ] ) -> str:
    ''' Returns character of a pair of surrogates, else escape of one. '''
    text = match.group( )
    if len( text ) > 1:
        return text.encode( 'utf-16-le', 'surrogatepass' ).decode(
            'utf-16-le' )
    code = ord( text )
    if 0xdc80 <= code <= 0xdcff: # noqa: PLR2004 # a byte, escaped
        return "\\x{byte:02x}".format( byte = code - 0xdc00 )
    return "\\u{code:04x}".format( code = code )


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


def _normalize_data( value: object, depth: int ) -> object:
    ''' Returns data with its keys and texts sendable; the same, if they
        are. Data deeper than the limit of results is left as it is (the
        engine refuses such results).
    '''
    genus = type( value )
    if genus is str:
        text = __.typx.cast( str, value )
        return text if text.isascii( ) else normalize_text( text )
    if depth >= _NORMALIZATION_DEPTH_MAXIMUM: return value
    if genus is list or genus is tuple:
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        items_ = [ _normalize_data( item, depth + 1 ) for item in items ]
        if all( new is old for new, old in zip( items_, items ) ):
            return value
        return items_
    if genus is not dict: return value
    return _normalize_mapping(
        __.typx.cast( dict[ object, object ], value ), depth )


def _normalize_mapping(
    mapping: dict[ object, object ], depth: int
) -> dict[ object, object ]:
    copy = {
        normalize_text( key ) if type( key ) is str else key:
            _normalize_data( item, depth + 1 )
        for key, item in mapping.items( ) }
    if len( copy ) == len( mapping ) and all(
        key is key_ and copy[ key ] is item
        for ( key, item ), key_ in zip( mapping.items( ), copy )
    ): return mapping
    return copy


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
        data = _normalize_data( item.data, 0 )
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

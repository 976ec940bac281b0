# SPDX-License-Identifier: Apache-2.0

''' Normalized tool calls, tool results and kinds of result content.

    Canisters are made for every invocation, so they are plain frozen,
    slotted dataclasses rather than frigid objects (which cost about ten times
    as much to construct): see the architecture decision on canisters.
'''


from . import __


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


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class InvocationCanister:
    ''' Normalized tool call, as extracted from a provider response.

        ``name`` is the provider-facing name. ``invalidity`` is set when the
        arguments could not be decoded (for example, text that is not JSON):
        such an invocation is never run; the model receives an error result.
    '''

    identifier: str
    name: str
    arguments: __.Arguments
    timestamp: float = __.dcls.field( default_factory = __.time.time )
    invalidity: __.Absential[ str ] = __.absent


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ResultCanister:
    ''' Normalized tool result, one per invocation.

        ``error`` is absent when the invocation succeeded. ``name`` is the
        provider-facing name of the invoked tool (some providers need it).
    '''

    invocation_id: str
    content: ContentSequence = ( )
    error: __.Absential[ Fault ] = __.absent
    timestamp: float = __.dcls.field( default_factory = __.time.time )
    name: str = ''

    def as_text( self ) -> str:
        ''' Returns text rendering of result, for text-only providers. '''
        texts = [ render_content_text( item ) for item in self.content ]
        if not __.is_absent( self.error ):
            texts.insert( 0, f"Error: {self.error.message}" )
        return '\n'.join( texts )

    def is_error( self ) -> bool:
        ''' Returns whether result reports an error. '''
        return not __.is_absent( self.error )


def is_content( value: object ) -> __.typx.TypeIs[ Content ]:
    ''' Returns whether value is a content canister. '''
    return isinstance( value, _content_classes )


def produce_content( value: object ) -> ContentSequence:
    ''' Normalizes value returned by a tool into content canisters.

        Strings become text; content canisters pass through; bytes with an
        image signature become images; JSON-compatible values, pydantic
        models and dataclasses become structured content; ``None`` becomes
        no content.
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


def render_content_text( content: Content ) -> str:
    ''' Renders content as text, with clear stand-ins for binary data. '''
    match content:
        case TextContent( ):
            return content.text
        case StructureContent( ):
            return __.json.dumps( content.data, ensure_ascii = False )
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


def _jsonify( value: object ) -> object:
    ''' Converts models and dataclasses into JSON-compatible values. '''
    dump = getattr( value, 'model_dump', None )
    if callable( dump ): return dump( mode = 'json' )
    if __.dcls.is_dataclass( value ) and not isinstance( value, type ):
        return __.dcls.asdict( value )
    return value


def _produce_content_from_bytes( data: bytes ) -> Content:
    for signature, media_type in _image_signatures:
        if data.startswith( signature ):
            return ImageContent( data = data, media_type = media_type )
    if data[ : 4 ] == b'RIFF' and data[ 8 : 12 ] == b'WEBP':
        return ImageContent( data = data, media_type = 'image/webp' )
    return TextContent( text = data.decode( 'utf-8', errors = 'replace' ) )

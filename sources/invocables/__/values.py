# SPDX-License-Identifier: Apache-2.0

''' Plain JSON: the one walker which copies, thaws and measures values
    against bounds; the one validator of timeouts and counts.

    Plain JSON is dicts with text keys, lists, text, booleans, ``None`` and
    finite numbers. Depth counts nested arrays and objects (the outer
    object is level 1); size counts the characters of every text and key,
    plus one for every value, which is close to the length of the JSON
    text. The bounds of the package are the constants below:
    :py:class:`invocables.execution.Limits` takes its defaults from them.
'''


from itertools import islice as _islice

from ..exceptions import ConfigurationInvalidity as _ConfigurationInvalidity
import invocables.__.imports as __


__all__ = (
    'ARGUMENTS_DEPTH_MAXIMUM',
    'ARGUMENTS_SIZE_MAXIMUM',
    'PLAIN_DEPTH_MAXIMUM',
    'RESULTS_DEPTH_MAXIMUM',
    'RESULTS_SIZE_MAXIMUM',
    'SCHEMA_DEPTH_MAXIMUM',
    'Flaw',
    'Walker',
    'copy_json',
    'copy_plain',
    'is_plain',
    'is_timeout',
    'thaw_json',
    'validate_count',
    'validate_timeout',
)


ARGUMENTS_DEPTH_MAXIMUM = 64 # arguments, descriptors
ARGUMENTS_SIZE_MAXIMUM = 4_194_304
PLAIN_DEPTH_MAXIMUM = 50 # schemas taken as they are, without a copy
RESULTS_DEPTH_MAXIMUM = 128
RESULTS_SIZE_MAXIMUM = 16_777_216
SCHEMA_DEPTH_MAXIMUM = 100 # schemas adapted for a provider

_INFINITY = float( 'inf' )
_KEYS_SCALAR = ( bool, int, float, type( None ) )
_PATH_PARTS_MAXIMUM = 8
_REASON_COUNT = "{value!r} is not a positive integer."
_REASON_TIMEOUT = (
    "expected a positive number of seconds or None, got {value!r} "
    "({kind}).{hint}" )
_SHOWN_BITS = 256 # integers longer are shown by their count of digits
_SHOWN_MAXIMUM = 80 # characters of a value shown in an error
_DIGITS_PER_BIT = 0.30103
_SCALARS_PLAIN = frozenset( ( str, bool, int, type( None ) ) )

Normalizer: __.typx.TypeAlias = __.cabc.Callable[ [ str ], str ]


class _Shown:
    ''' Value in an error, shown within bounds (``!r`` and ``str``
        alike): an integer too long to print by its digits, other reprs
        cut. '''

    __slots__ = ( 'value', )

    def __init__( self, value: object ): self.value = value

    def __repr__( self ) -> str:
        value = self.value
        if isinstance( value, int ) and value.bit_length( ) > _SHOWN_BITS:
            return "an integer of about {digits} digits".format(
                digits = int( value.bit_length( ) * _DIGITS_PER_BIT ) )
        try: text = repr( value )
        except Exception: text = f"a {type( value ).__name__}"
        if len( text ) <= _SHOWN_MAXIMUM: return text
        return f"{text[ : _SHOWN_MAXIMUM ]}..."

    __str__ = __repr__


class Flaw( Exception ):
    ''' Value is not plain JSON, or not within bounds; path grows outward.

        An internal signal: each boundary raises its own invalidity.
    '''

    def __init__( self, reason: str, *, located: bool = True ):
        super( ).__init__( reason )
        self.reason = reason
        self.located = located
        self.path: list[ str ] = [ ]

    def describe( self ) -> str:
        ''' Returns reason, with the path where it was found. '''
        if not self.path or not self.located: return self.reason
        parts = self.path[ : : -1 ]
        if len( parts ) > _PATH_PARTS_MAXIMUM:
            parts = [ *parts[ : _PATH_PARTS_MAXIMUM ], '...' ]
        path = ''.join( parts ).lstrip( '.' )
        return f"at '{path}': {self.reason}"


class Walker:
    ''' Walks value once: checks plain JSON, converts the rest, counts size.

        Lenient walkers (results) convert what is not JSON (sets, bytes,
        dataclasses, pydantic's types), make numbers which are not finite
        ``None`` and pass texts through the normalizer; strict walkers
        (arguments) refuse all but mappings, lists, tuples and scalars.
    '''

    __slots__ = (
        'depth_maximum', 'lenient', 'normalizer', 'size', 'size_maximum' )

    def __init__(
        self, depth_maximum: int, size_maximum: int | None, *,
        lenient: bool = True,
        normalizer: Normalizer | None = None,
    ):
        self.depth_maximum = depth_maximum
        self.lenient = lenient
        self.normalizer = normalizer
        self.size = 0
        self.size_maximum = size_maximum

    def walk( self, value: object, depth: int ) -> object:
        ''' Returns plain JSON for value at depth. '''
        genus = type( value )
        if genus is str:
            text = __.typx.cast( str, value )
            self.count( len( text ) + 1 )
            normalizer = self.normalizer
            return (
                text if normalizer is None or text.isascii( )
                else normalizer( text ) )
        if genus is int or genus is bool or value is None:
            self.count( 1 )
            return value
        if genus is float and (
            not self.lenient or _is_finite( __.typx.cast( float, value ) )
        ):
            self.count( 1 )
            return value
        if genus is dict:
            return self.walk_mapping(
                __.typx.cast( dict[ object, object ], value ), depth,
                plain = True )
        if genus is list:
            return self.walk_sequence(
                __.typx.cast( list[ object ], value ), depth, plain = True )
        return self.convert( value, depth )

    def convert( self, value: object, depth: int ) -> object:
        ''' Returns plain JSON for a value which is not plain. '''
        if isinstance( value, __.cabc.Mapping ):
            mapping = __.typx.cast( __.cabc.Mapping[ object, object ], value )
            return self.walk_mapping( mapping, depth, plain = False )
        sequences = (
            ( list, tuple, set, frozenset ) if self.lenient
            else ( list, tuple ) )
        if isinstance( value, sequences ):
            return self.walk_sequence(
                __.typx.cast( __.cabc.Iterable[ object ], value ), depth,
                plain = False )
        if not self.lenient: return self.walk( _coerce_scalar( value ), depth )
        return self.walk( self.serialize( value ), depth )

    def serialize( self, value: object ) -> object:
        ''' Returns value which is closer to plain JSON, or raises flaw. '''
        if isinstance( value, float ): return None # not finite
        if isinstance( value, ( bytes, bytearray ) ):
            return bytes( value ).decode( 'utf-8', errors = 'replace' )
        genus = type( value ).__qualname__
        if isinstance( value, __.cabc.Iterator ): # may never end
            raise Flaw(
                f"a {genus} (an iterator) is not JSON; return a list" )
        if _is_dataclass_plain( value ): return _survey_fields( value )
        serialized = _serialize_flawed( value )
        if serialized is value: # pydantic gave it back: no way forward
            raise Flaw( "cannot be serialized as JSON" )
        return serialized

    def count( self, size: int ) -> None:
        ''' Adds to size; raises flaw past the maximum. '''
        self.size += size
        maximum = self.size_maximum
        if maximum is not None and self.size > maximum:
            raise Flaw(
                f"larger than the limit of {maximum} characters",
                located = False )

    def walk_mapping(
        self,
        mapping: __.cabc.Mapping[ object, object ],
        depth: int, *,
        plain: bool,
    ) -> dict[ str, object ]:
        ''' Returns dict of plain JSON; the same dict if already plain. '''
        depth += 1
        self.enter( depth )
        copy: dict[ str, object ] | None = None if plain else { }
        normalizer = self.normalizer
        for position, ( key, item ) in enumerate( mapping.items( ) ):
            name = key if type( key ) is str else _name_key( key )
            if normalizer is not None and not name.isascii( ):
                name = normalizer( name )
            self.count( len( name ) + 1 )
            try: item_ = self.walk( item, depth )
            except Flaw as flaw:
                flaw.path.append( f".{name}" )
                raise
            if copy is None and ( item_ is not item or name is not key ):
                copy = dict( _islice(
                    __.typx.cast( dict[ str, object ], mapping ).items( ),
                    position ) )
            if copy is not None: copy[ name ] = item_
        if copy is None: return __.typx.cast( dict[ str, object ], mapping )
        return copy

    def walk_sequence(
        self,
        items: __.cabc.Iterable[ object ],
        depth: int, *,
        plain: bool,
    ) -> list[ object ]:
        ''' Returns list of plain JSON; the same list if already plain. '''
        depth += 1
        self.enter( depth )
        copy: list[ object ] | None = None if plain else [ ]
        for index, item in enumerate( items ):
            try: item_ = self.walk( item, depth )
            except Flaw as flaw:
                flaw.path.append( f"[{index}]" )
                raise
            if copy is None and item_ is not item:
                copy = list( __.typx.cast( list[ object ], items ) )
            if copy is not None:
                if index < len( copy ): copy[ index ] = item_
                else: copy.append( item_ )
        self.count( 1 )
        if copy is None: return __.typx.cast( list[ object ], items )
        return copy

    def enter( self, depth: int ) -> None:
        ''' Raises flaw if depth is past the maximum. '''
        if depth > self.depth_maximum:
            raise Flaw(
                f"nested deeper than the limit of {self.depth_maximum} "
                "levels" )


def abbreviate(
    text: str,
    maximum: int,
    quote: __.cabc.Callable[ [ str ], str ] = str,
) -> str:
    ''' Returns text for a message: quoted whole, or its first maximum
        characters quoted, with its length. '''
    if len( text ) <= maximum: return quote( text )
    return f"{quote( text[ : maximum ] )}... ({len( text )} characters)"


def copy_json(
    value: object,
    depth_maximum: int = RESULTS_DEPTH_MAXIMUM,
    size_maximum: int | None = None, *,
    lenient: bool = True,
    normalizer: Normalizer | None = None,
) -> object:
    ''' Returns value as plain JSON; plain JSON as it is, not copied.

        See :py:class:`Walker`. Raises :py:class:`Flaw`.
    '''
    walker = Walker(
        depth_maximum, size_maximum, lenient = lenient,
        normalizer = normalizer )
    return walker.walk( value, 0 )


def copy_plain( value: __.typx.Any, depth_maximum: int ) -> __.typx.Any:
    ''' Returns fresh copy of plain JSON (tuples and mappings taken as
        lists and dicts), nested within depth maximum.

        The fast copy: raises :py:class:`Flaw`, without a reason, for what
        is not plain, so that a careful copy may decide.
    '''
    return _copy_plain( value, 0, depth_maximum )


def is_plain(
    value: __.typx.Any, depth_maximum: int = PLAIN_DEPTH_MAXIMUM
) -> bool:
    ''' Returns whether value is plain JSON, nested within depth maximum.

        Reads without copying: what passes may be shared as it is.
    '''
    return _is_plain( value, 0, depth_maximum )


def is_timeout( value: object ) -> __.typx.TypeGuard[ float ]:
    ''' Returns whether value is a timeout: a positive, finite number of
        seconds (not a boolean). '''
    if isinstance( value, bool ) or not isinstance( value, ( int, float ) ):
        return False
    try: return 0 < float( value ) < _INFINITY
    except OverflowError: return False # an integer beyond floats


def thaw_json( value: __.typx.Any ) -> __.typx.Any:
    ''' Returns plain JSON copy (dicts, lists) of mappings and sequences. '''
    if isinstance( value, __.cabc.Mapping ):
        items = __.typx.cast( __.cabc.Mapping[ str, object ], value )
        return { key: thaw_json( item ) for key, item in items.items( ) }
    if isinstance( value, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        return [ thaw_json( item ) for item in items ]
    return value


def validate_count(
    value: __.typx.Any,
    location: str, *,
    minimum: int = 1,
    maximum: int | None = None,
    reason: str = _REASON_COUNT,
) -> __.typx.Any:
    ''' Returns count if it is an integer from minimum to maximum; absent
        passes.

        Raises :py:class:`invocables.exceptions.ConfigurationInvalidity`
        at location otherwise, with reason (formatted with ``value`` and
        ``maximum``).
    '''
    if __.is_absent( value ) or (
        isinstance( value, int ) and not isinstance( value, bool )
        and minimum <= value and ( maximum is None or value <= maximum )
    ): return value
    raise _ConfigurationInvalidity(
        location, reason.format( value = _Shown( value ), maximum = maximum ) )


def validate_timeout(
    value: __.typx.Any,
    location: str, *,
    nullable: bool = True,
    reason: str = _REASON_TIMEOUT,
) -> __.typx.Any:
    ''' Returns timeout in seconds if valid; absent (and ``None``, if
        nullable: no limit) passes through.

        A timeout is a positive, finite number of seconds. Raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity` at
        location otherwise, with reason (formatted with ``value``, its
        ``kind`` and a ``hint``).
    '''
    if __.is_absent( value ) or ( value is None and nullable ):
        return value
    if is_timeout( value ): return float( value )
    hint = (
        " Use None for no limit."
        if nullable and value == _INFINITY else '' )
    raise _ConfigurationInvalidity(
        location, reason.format(
            value = _Shown( value ), kind = type( value ).__name__,
            hint = hint ) )


@__.funct.cache
def _access_adapter( ) -> __.typx.Any:
    from pydantic import TypeAdapter
    return TypeAdapter( __.typx.Any )


def _coerce_scalar( value: object ) -> object:
    ''' Returns exact JSON scalar for instance of subclass; else flaw. '''
    if isinstance( value, str ): return str.__str__( value )
    if isinstance( value, int ): return int( value )
    if isinstance( value, float ): return float( value )
    raise Flaw( f"a value of type {type( value ).__qualname__} is not JSON" )


def _copy_plain(
    value: __.typx.Any, depth: int, maximum: int
) -> __.typx.Any:
    # Hot path of every first preparation: scalars are taken inline, and
    # values typed 'Any' need no casts (each a call at run time).
    genus = value.__class__ # typed Any, as value is
    if genus in _SCALARS_PLAIN: return value
    if genus is float:
        if _is_finite( value ): return value
        raise Flaw( 'unplain' )
    if depth >= maximum: raise Flaw( 'unplain' )
    depth += 1
    scalars = _SCALARS_PLAIN
    if genus is list or genus is tuple:
        return [
            item if type( item ) in scalars
            else _copy_plain( item, depth, maximum )
            for item in value ]
    if genus is dict or isinstance( value, __.cabc.Mapping ):
        mapping = __.typx.cast( # once per mapping, not per value
            __.cabc.Mapping[ __.typx.Any, __.typx.Any ], value )
        copied: dict[ str, __.typx.Any ] = { }
        for key, item in mapping.items( ):
            if type( key ) is not str: raise Flaw( 'unplain' )
            copied[ key ] = (
                item if type( item ) in scalars
                else _copy_plain( item, depth, maximum ) )
        return copied
    raise Flaw( 'unplain' )


def _fall_back( value: object ) -> object:
    ''' Converts for pydantic what it does not know; refuses the rest. '''
    if isinstance( value, __.cabc.Mapping ):
        return dict( __.typx.cast( __.cabc.Mapping[ object, object ], value ) )
    raise TypeError(
        f"a value of type {type( value ).__qualname__} is not JSON" )


def _is_dataclass_plain( value: object ) -> bool:
    ''' Returns whether value is an instance of a dataclass not pydantic's.
    '''
    if not __.dcls.is_dataclass( value ) or isinstance( value, type ):
        return False
    return not hasattr( type( value ), '__pydantic_fields__' )


def _is_finite( value: float ) -> bool:
    return value - value == 0.0


def _is_plain( # noqa: PLR0911
    value: __.typx.Any, depth: int, maximum: int
) -> bool:
    genus = value.__class__ # typed Any, as value is
    if genus in _SCALARS_PLAIN: return True
    if genus is float: return _is_finite( value )
    if depth >= maximum: return False
    depth += 1
    scalars = _SCALARS_PLAIN
    if genus is list:
        for item in value:
            if type( item ) not in scalars and not _is_plain(
                item, depth, maximum
            ): return False
        return True
    if genus is not dict: return False
    for key, item in value.items( ):
        if type( key ) is not str: return False
        if type( item ) not in scalars and not _is_plain(
            item, depth, maximum
        ): return False
    return True


def _name_key( key: object ) -> str:
    if isinstance( key, str ): return str.__str__( key )
    if isinstance( key, _KEYS_SCALAR ):
        return __.json.dumps( key )
    raise Flaw( f"a key of type {type( key ).__qualname__} is not text" )


def _serialize_flawed( value: object ) -> object:
    ''' Serializes value with pydantic. Raises flaw. '''
    adapter = _access_adapter( )
    try:
        return adapter.dump_python(
            value, mode = 'json', fallback = _fall_back )
    except Exception as exception:
        reason = str( exception ).splitlines( )[ 0 ] if str(
            exception ) else type( exception ).__name__
        raise Flaw(
            f"cannot be serialized as JSON ({reason})" ) from exception


def _survey_fields( value: object ) -> dict[ object, object ]:
    ''' Returns fields of dataclass instance, but private or absent ones. '''
    fields: dict[ object, object ] = { }
    for field in __.dcls.fields( __.typx.cast( __.typx.Any, value ) ):
        if field.name.startswith( '_' ): continue
        item = getattr( value, field.name, __.absent )
        if not __.is_absent( item ): fields[ field.name ] = item
    return fields

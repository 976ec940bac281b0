# SPDX-License-Identifier: Apache-2.0

''' Arguments of Gemini calls streamed as ``partialArgs``, by JSON path
    (Vertex AI with streamed function call arguments).
'''


import invocables.processors.__ as __
import invocables.processors._wire as _wire


_INDEX_DIGITS_MAXIMUM = 9
_PATH_STEPS_MAXIMUM = 64
_PROVIDER = 'gemini'
_path_step = __.re.compile(
    r'''\.([A-Za-z_$][\w$-]*)|\[(\d{1,9})\]|\[(?:'([^']*)'|"([^"]*)")\]''' )

_Step: __.typx.TypeAlias = str | int


class _Items:
    ''' Array of partial arguments, by index (sparse until assembled). '''

    __slots__ = ( 'items', )

    def __init__( self ) -> None:
        self.items: dict[ int, __.typx.Any ] = { }


class _Leaf:
    ''' Value of partial arguments at one path: its pieces, in order. '''

    __slots__ = ( 'pieces', )

    def __init__( self ) -> None:
        self.pieces: list[ __.typx.Any ] = [ ]

    def assemble( self ) -> __.typx.Any:
        ''' Returns value: text pieces joined once, else the last one. '''
        pieces = [ piece for piece in self.pieces if piece is not None ]
        if not pieces: return None
        if all( isinstance( piece, str ) for piece in pieces ):
            return ''.join( pieces )
        return pieces[ -1 ]


class PartialArguments:
    ''' Arguments of a call streamed as ``partialArgs``, by JSON path.

        The tree is built as values arrive, so that paths which disagree,
        or indexes beyond what the values so far can fill, raise at once;
        arrays stay sparse until assembly, so that no index allocates.
    '''

    __slots__ = ( 'count', 'root' )

    def __init__( self ) -> None:
        self.count = 0
        self.root: dict[ str, __.typx.Any ] = { }

    def assemble( self ) -> dict[ str, __.typx.Any ]:
        ''' Returns arguments object; string pieces are joined once. '''
        return {
            name: _assemble_node( node ) for name, node in self.root.items( ) }

    def ingest( self, partials: object ) -> None:
        ''' Records values of one chunk's ``partialArgs``. '''
        for partial in _wire.access_items(
            partials, _PROVIDER, 'partialArgs'
        ):
            path = _wire.access_text(
                access_aliased( partial, 'jsonPath', 'json_path' ),
                _PROVIDER, 'jsonPath' )
            self.count += 1
            leaf = _access_leaf( self.root, _parse_path( path ), self.count )
            leaf.pieces.append( _access_partial_value( partial ) )


def _access_leaf(
    root: dict[ str, __.typx.Any ], steps: tuple[ _Step, ... ], count: int
) -> _Leaf:
    ''' Returns leaf at path, making the containers on the way.

        An index must be below the number of values received so far for
        the call: each item needs a value, so a larger index skips items
        which cannot all have come (and would make an array of any size).
    '''
    container: __.typx.Any = root
    last = len( steps ) - 1
    for position, step in enumerate( steps ):
        if isinstance( step, int ) and step >= count:
            raise __.exceptions.ResponseInvalidity(
                _PROVIDER, f"JSON path index {step} skips items which never "
                "came." )
        members = _access_members( container, step )
        node: __.typx.Any = members.get( step )
        if position == last:
            if node is None: node = members[ step ] = _Leaf( )
            if isinstance( node, _Leaf ): return node
            break
        if node is None:
            fresh: __.typx.Any = (
                { } if isinstance( steps[ position + 1 ], str )
                else _Items( ) )
            node = members[ step ] = fresh
        container = node
    raise __.exceptions.ResponseInvalidity(
        _PROVIDER, "JSON paths of partial arguments disagree." )


def _access_members(
    container: __.typx.Any, step: _Step
) -> dict[ __.typx.Any, __.typx.Any ]:
    if isinstance( step, str ) and isinstance( container, dict ):
        return __.typx.cast( dict[ __.typx.Any, __.typx.Any ], container )
    if isinstance( step, int ) and isinstance( container, _Items ):
        items: dict[ __.typx.Any, __.typx.Any ] = container.items
        return items
    raise __.exceptions.ResponseInvalidity(
        _PROVIDER, "JSON paths of partial arguments disagree." )


def _access_partial_value( partial: object ) -> __.typx.Any:
    for name, alias in (
        ( 'stringValue', 'string_value' ),
        ( 'numberValue', 'number_value' ),
        ( 'boolValue', 'bool_value' ),
    ):
        value = access_aliased( partial, name, alias )
        if value is not None: return value
    return None


def _assemble_node( node: __.typx.Any ) -> __.typx.Any:
    ''' Returns value of node of partial arguments (depth is bounded). '''
    if isinstance( node, _Leaf ): return node.assemble( )
    if isinstance( node, _Items ):
        items = __.typx.cast( dict[ int, __.typx.Any ], node.items )
        if sorted( items ) != list( range( len( items ) ) ):
            raise __.exceptions.ResponseInvalidity(
                _PROVIDER, "an array of partial arguments misses items." )
        return [ _assemble_node( items[ index ] )
                 for index in range( len( items ) ) ]
    members = __.typx.cast( dict[ str, __.typx.Any ], node )
    return {
        name: _assemble_node( value ) for name, value in members.items( ) }


def _parse_path( path: str ) -> tuple[ _Step, ... ]:
    ''' Parses JSON path such as ``$.a.b[0]['c d']`` into steps. '''
    if not path.startswith( '$' ):
        raise __.exceptions.ResponseInvalidity(
            _PROVIDER, f"JSON path {path!r} does not start at '$'." )
    steps: list[ _Step ] = [ ]
    position = 1
    while position < len( path ):
        match = _path_step.match( path, position )
        if match is None or len( steps ) >= _PATH_STEPS_MAXIMUM:
            raise __.exceptions.ResponseInvalidity(
                _PROVIDER, "JSON path {path!r} cannot be read (at most "
                "{steps} steps of names and indexes of up to {digits} digits)."
                .format(
                    path = path[ : 80 ], steps = _PATH_STEPS_MAXIMUM,
                    digits = _INDEX_DIGITS_MAXIMUM ) )
        name, index, single, double = match.groups( )
        if index is not None: steps.append( int( index ) )
        else: steps.append( next(
            part for part in ( name, single, double ) if part is not None ) )
        position = match.end( )
    if not steps or not isinstance( steps[ 0 ], str ):
        raise __.exceptions.ResponseInvalidity(
            _PROVIDER, f"JSON path {path!r} does not name an argument." )
    return tuple( steps )


def access_aliased(
    value: object, name: str, alias: __.Absential[ str ] = __.absent
) -> __.typx.Any:
    ''' Returns field by wire name (camelCase) or Python name. '''
    found = _wire.access_field( value, name )
    if found is None and not __.is_absent( alias ):
        found = _wire.access_field( value, alias )
    return found

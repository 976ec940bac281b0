# SPDX-License-Identifier: Apache-2.0

''' JSON Schema checks and compiled argument validators.

    ``jsonschema`` is imported when the first validator is produced, so that
    ``import invocables`` stays light.
'''


from . import __
from . import exceptions as _exceptions


_ERRORS_MAXIMUM = 5
_SCHEMA_EMPTY: __.immut.Dictionary[ str, __.typx.Any ] = __.immut.Dictionary(
    type = 'object', properties = { } )


class Validator( __.immut.Object ):
    ''' Compiled validator of arguments against one JSON Schema.

        Compiled once, when the invoker is produced, and reused for every
        invocation.
    '''

    name: str
    schema: __.Schema

    def __init__( self, name: str, schema: __.Schema ):
        from jsonschema import Draft202012Validator
        self.name = name
        self.schema = schema
        # jsonschema's validator methods are only partly typed.
        self._validator: __.typx.Any = Draft202012Validator(
            thaw_json( schema ) )

    def validate_arguments( self, arguments: object ) -> __.Arguments:
        ''' Returns arguments if valid. Raises invalidity error otherwise. '''
        if not isinstance( arguments, __.cabc.Mapping ):
            raise _exceptions.ArgumentsInvalidity(
                self.name, "arguments must be a JSON object." )
        arguments_ = __.typx.cast( __.Arguments, arguments )
        if self._validator.is_valid( arguments_ ): return arguments_
        raise _exceptions.ArgumentsInvalidity(
            self.name, self._describe_errors( arguments_ ) )

    def _describe_errors( self, arguments: object ) -> str:
        from jsonschema.exceptions import relevance
        errors = sorted(
            self._validator.iter_errors( arguments ), key = relevance )
        lines: list[ str ] = [ ]
        for error in errors[ : _ERRORS_MAXIMUM ]:
            path = '.'.join( str( part ) for part in error.absolute_path )
            where = f"at '{path}'" if path else 'at top level'
            lines.append( f"{where}: {error.message}" )
        if len( errors ) > _ERRORS_MAXIMUM:
            lines.append( "({count} more errors)".format(
                count = len( errors ) - _ERRORS_MAXIMUM ) )
        return '; '.join( lines ) + '.'


def produce_validator( name: str, schema: __.Schema ) -> Validator:
    ''' Checks schema and returns compiled validator for it. '''
    validate_schema( name, schema )
    return Validator( name, schema )


def validate_schema( name: str, schema: object ) -> __.Schema:
    ''' Returns schema if valid JSON Schema Draft 2020-12 for tool arguments.

        Raises :py:class:`invocables.exceptions.SchemaInvalidity`, naming the
        tool, otherwise.
    '''
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    if not isinstance( schema, __.cabc.Mapping ):
        raise _exceptions.SchemaInvalidity(
            name, "the schema must be a JSON object (mapping)." )
    schema_ = __.typx.cast( __.Schema, schema )
    genus = schema_.get( 'type', 'object' )
    if genus != 'object':
        raise _exceptions.SchemaInvalidity(
            name, f"tool arguments must be an object, not {genus!r}." )
    try: Draft202012Validator.check_schema( thaw_json( schema_ ) )
    except SchemaError as exception:
        raise _exceptions.SchemaInvalidity(
            name, exception.message ) from exception
    return schema_


def access_schema_empty( ) -> __.Schema:
    ''' Returns schema of a tool which takes no arguments. '''
    return _SCHEMA_EMPTY


def thaw_json( value: __.typx.Any ) -> __.typx.Any:
    ''' Returns plain JSON copy (dicts, lists) of mappings and sequences. '''
    if isinstance( value, __.cabc.Mapping ):
        items = __.typx.cast( __.cabc.Mapping[ str, object ], value )
        return { key: thaw_json( item ) for key, item in items.items( ) }
    if isinstance( value, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        return [ thaw_json( item ) for item in items ]
    return value



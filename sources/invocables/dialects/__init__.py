# SPDX-License-Identifier: Apache-2.0

''' JSON Schema dialects of providers: checks and safe transformations.

    Providers accept different subsets of JSON Schema for tool arguments.
    :py:func:`adapt_schema` returns a copy of a schema which the dialect
    accepts, or raises
    :py:class:`invocables.exceptions.SchemaDialectInvalidity` naming the
    rule which cannot be met. :py:func:`adapt_tool_schema` (one tool) and
    :py:func:`adapt_schemas` (many tools) leave out each tool which
    cannot be adapted with a warning, so that one bad schema never fails a
    whole request; :py:func:`adapt_tool_schema_strictly` tells, with a
    warning, when a tool cannot be offered in OpenAI strict mode.

    Transformations only loosen a schema where they must change it (for
    example, dropping a ``pattern`` which a provider refuses): the library
    still validates arguments against the original schema before a tool
    runs, so the model receives an error result for arguments which the
    original schema refuses. What would narrow the arguments a tool can be
    called with (an object which takes any keys, a recursive structure for
    Gemini) is refused instead. Input schemas are never modified, and any
    input, however malformed (wrong JSON types, non-string keys, cycles,
    deep nesting, huge enumerations), gives an adapted schema or the
    refusal: never another exception.
'''


import warnings as _warnings

from . import __
from . import _core as _core
from . import _gemini as _gemini
from . import _roots as _roots
from . import _strict as _strict


Dialect: __.typx.TypeAlias = __.typx.Literal[
    'anthropic', 'cohere', 'gemini', 'ollama', 'openai', 'openai-strict' ]
Node: __.typx.TypeAlias = dict[ str, __.typx.Any ]

# Parameters documented alike wherever they are taken.
_Name: __.typx.TypeAlias = __.typx.Annotated[
    str, __.ddoc.Doc( ''' Provider-facing name of tool. ''' ) ]
_Schema: __.typx.TypeAlias = __.typx.Annotated[
    __.Schema, __.ddoc.Doc( ''' JSON Schema of tool arguments. ''' ) ]
_Target: __.typx.TypeAlias = __.typx.Annotated[
    str, __.ddoc.Doc( ''' Target dialect (see adapt_schema). ''' ) ]
_Option: __.typx.TypeAlias = __.typx.Annotated[
    bool, __.ddoc.Doc( ''' As for adapt_schema. ''' ) ]

DEPTH_MAXIMUM = _core.DEPTH_MAXIMUM
DIALECTS: frozenset[ str ] = frozenset( (
    'anthropic', 'cohere', 'gemini', 'ollama', 'openai', 'openai-strict' ) )
# Dialects which take a plain object root as it is (Ollama checks it): see
# takes_plain_roots.
DIALECTS_ROOT_TAKEN: frozenset[ str ] = frozenset( (
    'anthropic', 'cohere', 'openai' ) )
NODES_MAXIMUM = _core.NODES_MAXIMUM
STRICT_ENUM_VALUES_MAXIMUM = _strict.ENUM_VALUES_MAXIMUM
STRICT_NESTING_MAXIMUM = _strict.NESTING_MAXIMUM
STRICT_PROPERTIES_MAXIMUM = _strict.PROPERTIES_MAXIMUM

_DIALECTS_ROOT = frozenset( ( 'anthropic', 'cohere', 'ollama', 'openai' ) )
_TYPES_NAME_OR_NONE: frozenset[ type ] = frozenset( ( str, type( None ) ) )
# Keys whose resolution at the root may merge nested nodes into it.
_KEYS_ROOT_RESOLVED = frozenset( ( '$ref', 'allOf', 'anyOf', 'oneOf' ) )

_scribe = __.produce_scribe( __name__ )


def adapt_schema(
    schema: _Schema,
    dialect: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' One of 'anthropic', 'cohere', 'gemini', 'ollama',
            'openai', 'openai-strict'. ''' ),
    ],
    name: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Name of tool, for error messages. ''' )
    ] = 'tool',
    *,
    share: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether the result may share the nested nodes of
            the schema which the dialect leaves as they are: neither may
            then be changed. ''' ),
    ] = False,
    plain: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether the schema is known to be plain JSON (as
            the root of a compiled validator is), which spares reading it
            to know. ''' ),
    ] = False,
) -> Node:
    ''' Returns copy of schema which dialect accepts.

        Raises :py:class:`invocables.exceptions.SchemaDialectInvalidity`,
        naming the tool, the dialect and the rule, when the schema cannot be
        expressed in the dialect; raises
        :py:class:`invocables.exceptions.ProviderNoSupport` for an unknown
        dialect. The input schema is never modified and no partly
        transformed schema is ever returned. With ``share``, a plain schema
        whose root alone the dialect changes (or, for Gemini, which is
        already in its subset) is copied at the root only (processors do
        so: their adapted schemas are never changed).
    '''
    adapter = _adapters.get( dialect )
    if adapter is None:
        names = ', '.join( sorted( DIALECTS ) )
        raise __.exceptions.ProviderNoSupport(
            dialect, "no JSON Schema dialect of that name; use one of "
            "{names}.".format( names = names ) )
    try:
        shared = _share_root( schema, dialect, plain ) if share else None
        if shared is not None: return shared
        return adapter( _core.copy_schema( schema ) )
    except _core.Refusal as refusal:
        raise __.exceptions.SchemaDialectInvalidity(
            name, dialect, refusal.describe( ) ) from None
    except RecursionError as exception:
        raise __.exceptions.SchemaDialectInvalidity(
            name, dialect, "the schema is nested too deeply." ) from exception
    except Exception as exception:
        # Safety net: a defect in an adapter must never fail a request.
        raise __.exceptions.SchemaDialectInvalidity(
            name, dialect, "the schema could not be read ({kind}: "
            "{message}).".format(
                kind = type( exception ).__name__, message = exception )
        ) from exception


def adapt_schemas(
    schemas: __.typx.Annotated[
        __.cabc.Mapping[ str, __.Schema ]
        | __.cabc.Iterable[ tuple[ str, __.Schema ] ],
        __.ddoc.Doc( ''' Schemas by provider-facing tool name. ''' ),
    ],
    dialect: _Target,
) -> dict[ str, Node ]:
    ''' Returns adapted schemas by tool name, leaving out unfit tools.

        Each tool whose schema cannot be expressed in the dialect is left
        out alone, as by :py:func:`adapt_tool_schema`; the other tools are
        kept, in their order.
    '''
    items = __.typx.cast(
        __.cabc.Iterable[ tuple[ str, __.Schema ] ],
        schemas.items( ) if isinstance( schemas, __.cabc.Mapping )
        else schemas )
    adapted: dict[ str, Node ] = { }
    for name, schema in items:
        result = _adapt_or_warn( name, schema, dialect, 3 )
        if result is not None: adapted[ name ] = result
    return adapted


def adapt_tool_schema(
    name: _Name,
    schema: _Schema,
    dialect: _Target,
    *,
    share: _Option = False,
    plain: _Option = False,
) -> Node | None:
    ''' Returns adapted schema of one tool, or ``None`` to leave it out.

        When the schema cannot be expressed in the dialect, issues a
        :py:class:`invocables.exceptions.ToolExclusionWarning` naming the
        tool and the rule, logs it, and returns ``None``, so that the tool
        is left out alone rather than failing the whole request.
    '''
    return _adapt_or_warn(
        name, schema, dialect, 3, share = share, plain = plain )


def adapt_plain_root(
    name: _Name,
    root: __.typx.Annotated[
        Node,
        __.ddoc.Doc( ''' Root known plain, as a validator's
            (:py:attr:`invocables.schemata.Validator.root`). ''' ),
    ],
    dialect: _Target,
) -> Node | None:
    ''' Returns adapted schema of one tool from its root known plain, or
        ``None`` to leave it out, as :py:func:`adapt_tool_schema` does
        (sharing): the root itself where the dialect takes it as it is or
        only checks it (Ollama's properties), without reading it again.
    '''
    if dialect in DIALECTS_ROOT_TAKEN: return root
    if dialect == 'ollama':
        try: return _verify_ollama_properties( root )
        except _core.Refusal: pass # refused below, with its warning
    return _adapt_or_warn( name, root, dialect, 3, share = True, plain = True )


def adapt_plain_roots(
    names: __.typx.Annotated[
        __.cabc.Sequence[ str ],
        __.ddoc.Doc( ''' Provider-facing names of tools, in order. ''' ),
    ],
    roots: __.typx.Annotated[
        __.cabc.Sequence[ Node ],
        __.ddoc.Doc( ''' Roots known plain, as validators' (see
            adapt_plain_root), in order. ''' ),
    ],
    dialect: _Target,
) -> list[ Node | None ]:
    ''' Returns adapted schemas of tools from their roots known plain, in
        order, ``None`` for each to leave out: what
        :py:func:`adapt_plain_root` gives for each (warnings in order), in
        one pass: a Gemini root already in its subset, or an Ollama root
        whose properties it takes, is told without the adapter's calls.
    '''
    if dialect in DIALECTS_ROOT_TAKEN: return list( roots )
    adapted: list[ Node | None ] = [ ]
    if dialect == 'gemini':
        is_ready = _gemini.is_ready
        dropped = _gemini.KEYS_ROOT_DROPPED
        for name, root in zip( names, roots, strict = True ):
            if root.__class__ is dict and is_ready( root ):
                root_ = dict( root )
                for key in dropped: root_.pop( key, None )
                adapted.append( root_ )
            else:
                adapted.append( _adapt_or_warn(
                    name, root, dialect, 3, share = True, plain = True ) )
        return adapted
    ollama = dialect == 'ollama'
    for name, root in zip( names, roots, strict = True ):
        if ollama:
            try: adapted.append( _verify_ollama_properties( root ) )
            except _core.Refusal: pass # refused below, with its warning
            else: continue
        adapted.append( _adapt_or_warn(
            name, root, dialect, 3, share = True, plain = True ) )
    return adapted


def takes_plain_roots(
    dialect: _Target,
) -> bool:
    ''' Returns whether dialect takes a plain object root as it is, less
        ``$schema``: then a plain schema with such a root adapts to its
        root copied, and the copy made with its tool may be offered
        (:py:attr:`invocables.schemata.Validator.root`).
    '''
    return dialect in DIALECTS_ROOT_TAKEN


def adapt_tool_schema_strictly(
    name: _Name,
    schema: _Schema,
    provider: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Name of provider, for the warning. ''' )
    ] = 'openai',
) -> Node | None:
    ''' Returns schema in OpenAI strict mode, or ``None`` to offer it
        without.

        When strict mode cannot express the schema, issues a
        :py:class:`invocables.exceptions.ToolStrictnessWarning` (a
        :py:class:`invocables.exceptions.ToolExclusionWarning`) naming the
        tool, the provider and the rule, logs it, and returns ``None``: the
        caller then offers the tool in the provider's non-strict dialect.
    '''
    try: return adapt_schema( schema, 'openai-strict', name )
    except __.exceptions.SchemaDialectInvalidity as exception:
        warning = __.exceptions.ToolStrictnessWarning(
            name, provider, exception.rule )
        _scribe.warning( str( warning ) )
        _warnings.warn( warning, stacklevel = 2 )
    return None


def normalize_strict_arguments(
    schema: __.typx.Annotated[
        __.Schema,
        __.ddoc.Doc( ''' Original schema (before 'openai-strict'). ''' ),
    ],
    arguments: __.typx.Annotated[
        __.typx.Any, __.ddoc.Doc( ''' Arguments sent by the model. ''' )
    ],
) -> __.typx.Any:
    ''' Returns arguments without the nulls which strict mode forced.

        In OpenAI strict mode every property is required, so optional
        properties are made nullable and the model sends ``null`` for those
        it leaves out. This removes such a ``null`` wherever strict mode
        added it (in nested objects, in arrays of objects, in alternatives,
        through references, and in a top-level ``anyOf`` or ``oneOf`` which
        was merged) when the original schema of that property does not
        accept ``null``, so that the arguments validate against the
        original schema. Arguments of a schema which strict mode cannot
        express (a tool offered without strict mode) are returned as they
        are. What strict mode added is recorded once per schema (cached by
        identity: schemas are taken as immutable).
    '''
    if not isinstance( arguments, __.cabc.Mapping ): return arguments
    mapping = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], arguments )
    record = _strict.access_record( schema )
    if record is None: return mapping
    return record.strip( dict( mapping ) )


def _adapt_or_warn(
    name: str,
    schema: __.Schema,
    dialect: str,
    level: int,
    share: bool = False, # noqa: FBT001,FBT002
    plain: bool = False, # noqa: FBT001,FBT002
) -> Node | None:
    try:
        return adapt_schema(
            schema, dialect, name, share = share, plain = plain )
    except __.exceptions.SchemaDialectInvalidity as exception:
        warning = __.exceptions.ToolExclusionWarning(
            name, dialect, exception.rule )
        _scribe.warning( str( warning ) )
        _warnings.warn( warning, stacklevel = level )
    return None


def _share_root(
    schema: __.Schema, dialect: str, plain: bool # noqa: FBT001
) -> Node | None:
    ''' Returns adaptation of plain schema which copies its root alone,
        where the dialect changes only the root (or, for Gemini, drops
        keys of a root already in its subset); ``None`` otherwise.
    '''
    if type( schema ) is not dict: return None
    root = __.typx.cast( Node, schema )
    if dialect == 'gemini':
        # Plain first: its depth is bounded for the read.
        if not (
            ( plain or _core.is_plain( root ) ) and _gemini.is_ready( root )
        ):
            return None
        root = dict( root )
        for key in _gemini.KEYS_ROOT_DROPPED: root.pop( key, None )
        return root
    if dialect not in _DIALECTS_ROOT or not (
        root.keys( ).isdisjoint( _KEYS_ROOT_RESOLVED )
        and ( plain or _core.is_plain( root ) )
    ): return None
    return _adapters[ dialect ]( dict( root ) )


def _adapt_anthropic( schema: Node ) -> Node:
    ''' Anthropic: object root, no top-level combinators or enum. '''
    return _roots.normalize_root( schema )


def _adapt_cohere( schema: Node ) -> Node:
    ''' Cohere v2: like OpenAI (non-strict); object root. '''
    return _roots.normalize_root( schema )


def _adapt_ollama( schema: Node ) -> Node:
    ''' Ollama: object root; each property an object with string type. '''
    return _verify_ollama_properties( _roots.normalize_root( schema ) )


def _adapt_openai( schema: Node ) -> Node:
    ''' OpenAI (non-strict): object root, anything else is accepted. '''
    return _roots.normalize_root( schema )


def _adapt_openai_strict( schema: Node ) -> Node:
    ''' OpenAI strict: closed objects, all required, limited keywords. '''
    return _strict.adapt_strict( schema )[ 0 ]


def _verify_ollama_properties( root: Node ) -> Node:
    ''' Refuses a property of a plain object root which Ollama cannot
        take: each must be an object, with string type if any.
    '''
    properties = __.typx.cast( Node, root[ 'properties' ] )
    for key, value in properties.items( ):
        if value.__class__ is dict and (
            value.get( 'type' ).__class__ in _TYPES_NAME_OR_NONE
        ): continue # the common property, told at once
        path = f"/properties/{key}"
        if not isinstance( value, dict ):
            raise _core.Refusal(
                "each property must be a schema object, not a boolean", path )
        genus = __.typx.cast( Node, value ).get( 'type' )
        if genus is not None and not _core.is_type_names( genus ):
            raise _core.Refusal(
                "property 'type' must be a string or a list of strings",
                path )
    return root


_adapters: __.cabc.Mapping[ str, __.cabc.Callable[ [ Node ], Node ] ] = (
    __.types.MappingProxyType( {
        'anthropic': _adapt_anthropic,
        'cohere': _adapt_cohere,
        'gemini': _gemini.adapt_gemini,
        'ollama': _adapt_ollama,
        'openai': _adapt_openai,
        'openai-strict': _adapt_openai_strict,
    } ) )

# SPDX-License-Identifier: Apache-2.0

''' Loading of descriptors: files and mappings read into validated records.

    Every file is checked completely before any ensemble is produced: an
    error raises :py:class:`invocables.exceptions.DescriptorInvalidity`,
    naming the file, the key path and the fix. Implementations of enabled
    tools are imported and their signatures checked while loading.
'''


from importlib import import_module as _import_module
from os import PathLike as _PathLike

import invocables.descriptors.__ as __
import invocables.descriptors.paths as _paths
import invocables.descriptors.reading as _reading
import invocables.descriptors.records as _records
import invocables.descriptors.servers as _servers
from .tables import Table as _Table
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.toolsets._delegates as _delegates


# Matched whole (fullmatch): '$' would also accept a final newline.
_name_builtin = __.re.compile( r'[a-z][a-z0-9_]*' )
_implementation_path = __.re.compile(
    r'[A-Za-z_][\w.]*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*' )
_implementation_module = __.re.compile( r'[A-Za-z_]\w*(\.[A-Za-z_]\w*)*' )
_absence = object( )
_RETRIES_MAXIMUM = 100
_TASK_SUPPORTS = ( 'forbidden', 'optional', 'required' )


def complete_function(
    descriptor: _records.InvokerDescriptor
) -> _records.InvokerDescriptor:
    ''' Returns descriptor with implementation imported, if not yet.

        Descriptors of disabled ensembles and tools are loaded without
        importing their implementations.
    '''
    if not __.is_absent( descriptor.function ): return descriptor
    if __.is_absent( descriptor.implementation ): return descriptor
    header = _Table( descriptor.location, 'invoker', { } )
    function = import_function( header, descriptor.implementation )
    return __.dcls.replace( descriptor, function = function )


def import_function(
    header: _Table, implementation: str
) -> __.cabc.Callable[ ..., __.typx.Any ]:
    ''' Imports implementation; checks that it takes two arguments. '''
    module_name, attributes = implementation.split( ':', 1 )
    # A module may exit the program (SystemExit) when imported.
    try: value: object = _import_module( module_name )
    except ( Exception, SystemExit ) as exception:
        header.fail(
            'implementation', f"cannot import module {module_name!r} "
            f"({exception!r}); check the module name, that its package is "
            "installed and that importing it succeeds.", cause = exception )
    for attribute in attributes.split( '.' ):
        try: value = getattr( value, attribute, _absence )
        except Exception as exception:
            header.fail(
                'implementation', f"reading {attribute!r} of "
                f"{module_name!r} raised {exception!r}; name another "
                "function.", cause = exception )
        if value is _absence:
            header.fail(
                'implementation', f"module {module_name!r} has no "
                f"{attributes!r}; check the name after the colon." )
    if not callable( value ):
        header.fail(
            'implementation', f"{implementation!r} is not callable; name "
            "a function taking ( context, arguments )." )
    _validate_signature( header, implementation, value )
    return value


def produce_configuration(
    source: _records.ConfigurationSource,
    location: __.Absential[ str ] = __.absent,
) -> _records.Configuration:
    ''' Produces validated configuration from file or mapping.

        Relative paths in a file are relative to its folder; in a mapping,
        relative to the current directory.
    '''
    location_, folder, document = _read_source(
        source, location, _reading.read_toml )
    table = _Table( location_, '', document )
    ensembles = _produce_ensembles_entries(
        table, folder, confined = not isinstance( source, __.cabc.Mapping ) )
    roots = _produce_roots( table, folder )
    table.finish( )
    return _records.Configuration(
        location = location_, ensembles = ensembles, roots = roots )


def produce_ensemble_descriptor(
    path: str | _PathLike[ str ],
) -> _records.EnsembleDescriptor:
    ''' Produces validated ensemble descriptor from file. '''
    path_ = __.Path( path ).absolute( )
    return _produce_ensemble_descriptor( path_, _reading.read_toml( path_ ) )


def produce_invoker_descriptor(
    path: str | _PathLike[ str ], *, local: bool = True
) -> _records.InvokerDescriptor:
    ''' Produces validated invoker descriptor from file.

        A local invoker needs an implementation; an invoker pinned to an
        MCP server must have none.
    '''
    path_ = __.Path( path ).absolute( )
    return _produce_invoker_descriptor(
        path_, _reading.read_toml( path_ ), local = local, required = False )


def produce_server_descriptors(
    source: str | _PathLike[ str ] | __.cabc.Mapping[ str, __.typx.Any ],
    location: __.Absential[ str ] = __.absent,
) -> tuple[ _records.EnsembleDescriptor, ... ]:
    ''' Produces ensemble descriptors from the common ``mcpServers`` JSON.

        Understands ``command``, ``args``, ``env``, ``cwd``, ``url``,
        ``headers``, ``type`` (or ``transport``), ``authorization`` (an
        object with the keys of ``[mcp.authorization]``),
        ``resourcesAsTools`` and ``disabled`` of each server; ``${NAME}``
        and ``${env:NAME}`` values become ``env:NAME``.
    '''
    location_, folder, document = _read_source(
        source, location, _reading.read_json, expand = False )
    return tuple(
        _servers.produce_server_ensemble_descriptor(
            name, location_, _Table( location_, keypath, table ), folder )
        for name, keypath, table in _servers.survey_servers(
            location_, document ) )


def _produce_ensembles_entries(
    table: _Table, folder: __.Path, *, confined: bool
) -> tuple[ _records.EnsembleDescriptor, ... ]:
    entries = table.access_tables( 'ensembles', default = ( ) )
    descriptors: list[ _records.EnsembleDescriptor ] = [ ]
    seen: dict[ str, str ] = { }
    for entry in entries:
        produced = _produce_ensembles_entry(
            entry, folder, confined = confined )
        # Entry by entry: a file listed again and again is read twice.
        _validate_ensemble_names( table.location, produced, seen )
        descriptors.extend( produced )
        entry.finish( )
    return tuple( descriptors )


def _produce_ensembles_entry(
    entry: _Table, folder: __.Path, *, confined: bool
) -> tuple[ _records.EnsembleDescriptor, ... ]:
    enabled = entry.access( 'enabled', bool, default = __.absent )
    configuration = entry.access( 'configuration', dict, default = { } )
    module = _access_module( entry )
    kinds = [
        key for key in ( 'source', 'builtin', 'mcp_servers' )
        if key in entry.table ]
    if len( kinds ) != 1:
        entry.fail(
            '', "give exactly one of 'source' (an ensemble descriptor), "
            "'builtin' (such as 'io') or 'mcp_servers' (an mcpServers JSON "
            "file)." )
    if kinds[ 0 ] == 'mcp_servers':
        path = _paths.resolve_source(
            entry, 'mcp_servers', folder, confined = confined )
        descriptors = produce_server_descriptors( path )
    else:
        if kinds[ 0 ] == 'source':
            path = _paths.resolve_source(
                entry, 'source', folder, confined = confined )
        else: path = _resolve_builtin( entry )
        descriptors = ( _produce_ensemble_descriptor(
            path, _reading.read_toml( path ), enabled = enabled,
            module = module ), )
    if configuration and any(
        not __.is_absent( item.server ) for item in descriptors
    ):
        entry.fail(
            'configuration', "MCP servers take no configuration table; "
            "remove it." )
    changes: dict[ str, __.typx.Any ] = { }
    if not __.is_absent( enabled ): changes[ 'enabled' ] = enabled
    wrapping = _produce_wrapping( entry )
    if wrapping: changes[ 'wrapping' ] = wrapping
    return tuple(
        __.dcls.replace(
            item, **changes, configuration = __.immut.Dictionary(
                { ** item.configuration, ** configuration } ) )
        for item in descriptors )


def _produce_ensemble_descriptor(
    path: __.Path,
    document: __.cabc.Mapping[ str, __.typx.Any ],
    *,
    enabled: __.Absential[ bool ] = __.absent,
    module: __.Absential[ str ] = __.absent,
) -> _records.EnsembleDescriptor:
    ''' Produces ensemble descriptor; imports implementations if enabled.

        The entry of a configuration may enable or disable the ensemble
        (``enabled``), and name the module which implements its tools
        (``implementation``), over its own descriptor.
    '''
    location = str( path )
    table = _Table( location, '', document )
    header = table.access_table( 'ensemble' )
    name = _access_name( header, 'ensemble' )
    enabled_ = header.access( 'enabled', bool, default = True )
    description = header.access( 'description', str, default = '' )
    module_ = _access_module( header )
    if __.is_absent( module ): module = module_
    header.finish( )
    timeout, max_retries = _produce_defaults( table )
    server_table = table.access_table( 'mcp', default = __.absent )
    server = (
        __.absent if __.is_absent( server_table )
        else _servers.produce_server_descriptor( server_table, path.parent ) )
    configuration = table.access( 'configuration', dict, default = { } )
    if configuration and not __.is_absent( server ):
        table.fail(
            'configuration', "an MCP server ensemble takes no "
            "configuration table; remove it." )
    invokers = _produce_invokers_entries(
        table, path.parent, local = __.is_absent( server ),
        importing = enabled_ if __.is_absent( enabled ) else enabled,
        module = module )
    table.finish( )
    if not __.is_absent( server ) and not (
        __.is_absent( timeout ) or __.is_absent( server.tool_timeout )
    ):
        table.fail(
            'mcp.tool_timeout', "the per-call timeout is given twice (also "
            "as defaults.timeout); keep one of them." )
    if __.is_absent( server ) and not invokers:
        table.fail(
            'invokers', "the ensemble has no tools: add [[invokers]] "
            "entries with a 'source' or a 'name', or an [mcp] table." )
    return _records.EnsembleDescriptor(
        name = name, location = location, enabled = enabled_,
        description = description, implementation = module,
        timeout = timeout, max_retries = max_retries,
        configuration = __.immut.Dictionary( configuration ),
        invokers = invokers, server = server )


def _access_module( header: _Table ) -> __.Absential[ str ]:
    ''' Returns module which implements the tools of an ensemble, if any.

        Its functions, named after the tools, implement those tools whose
        descriptors name no implementation of their own.
    '''
    module = header.access( 'implementation', str, default = __.absent )
    if not __.is_absent( module ) and not (
        _implementation_module.fullmatch( module )
    ):
        header.fail(
            'implementation', f"{module!r} is not a module path; write "
            "'package.module', whose functions, named after the tools, "
            "implement them." )
    return module


def _access_name( header: _Table, kind: str ) -> str:
    ''' Returns name of an ensemble or a tool, if allowed. '''
    name = header.access( 'name', str )
    flaw = _invokers.access_name_flaw( name )
    if flaw is not None:
        header.fail(
            'name', "{kind} name {label!r} is not allowed: {flaw}.".format(
                kind = kind, label = _invokers.produce_name_label( name ),
                flaw = flaw ) )
    return name


def _access_retries( table: _Table ) -> __.Absential[ int ]:
    retries = table.access( 'max_retries', int, default = __.absent )
    if not __.is_absent( retries ) and not (
        0 <= retries <= _RETRIES_MAXIMUM
    ):
        table.fail(
            'max_retries', f"expected a whole number from 0 to "
            f"{_RETRIES_MAXIMUM}, got {retries!r}." )
    return retries


def _produce_defaults(
    table: _Table
) -> tuple[ __.Absential[ float | None ], __.Absential[ int ] ]:
    defaults = table.access_table( 'defaults', default = __.absent )
    if __.is_absent( defaults ): return __.absent, __.absent
    timeout = defaults.access_timeout( 'timeout', unbounded = True )
    max_retries = _access_retries( defaults )
    defaults.finish( )
    return timeout, max_retries


def _produce_invokers_entries(
    table: _Table,
    folder: __.Path,
    *,
    local: bool,
    importing: bool,
    module: __.Absential[ str ] = __.absent,
) -> tuple[ _records.InvokerDescriptor, ... ]:
    entries = table.access_tables( 'invokers', default = ( ) )
    descriptors: list[ _records.InvokerDescriptor ] = [ ]
    sources: dict[ str, str ] = { }
    for entry in entries:
        if 'source' not in entry.table and 'name' in entry.table:
            # Inline form: the entry is the descriptor.
            path = __.Path( entry.location )
            descriptor = _produce_invoker_record(
                entry.location, entry, entry,
                local = local, importing = importing, module = module )
        else:
            path = _paths.resolve_source( entry, 'source', folder )
            entry.finish( )
            descriptor = _produce_invoker_descriptor(
                path, _reading.read_toml( path ),
                local = local, importing = importing, module = module )
        if descriptor.name in sources:
            entry.fail(
                'source', "tool name {name!r} is also given by {other}; "
                "rename one of the tools or remove one entry.".format(
                    name = descriptor.name,
                    other = sources[ descriptor.name ] ) )
        sources[ descriptor.name ] = f"{entry.keypath} ({path})"
        descriptors.append( descriptor )
    return tuple( descriptors )


def _produce_invoker_descriptor(
    path: __.Path,
    document: __.cabc.Mapping[ str, __.typx.Any ],
    *,
    local: bool,
    importing: bool = True,
    module: __.Absential[ str ] = __.absent,
    required: bool = True,
) -> _records.InvokerDescriptor:
    ''' Produces invoker descriptor; imports implementation if enabled. '''
    location = str( path )
    table = _Table( location, '', document )
    header = table.access_table( 'invoker' )
    return _produce_invoker_record(
        location, table, header, local = local, importing = importing,
        module = module, required = required )


def _produce_invoker_record(
    location: str,
    table: _Table,
    header: _Table,
    *,
    local: bool,
    importing: bool,
    module: __.Absential[ str ],
    required: bool = True,
) -> _records.InvokerDescriptor:
    ''' Produces invoker descriptor from header and table (the same table
        for an inline ``[[invokers]]`` entry).
    '''
    name = _access_name( header, 'tool' )
    enabled = header.access( 'enabled', bool, default = True )
    description = header.access( 'description', str, default = '' )
    implementation, function = _produce_implementation(
        header, name, local = local, importing = importing and enabled,
        module = module, required = required )
    timeout = header.access_timeout( 'timeout', unbounded = True )
    max_retries = _access_retries( header )
    deduplicate = header.access( 'deduplicate', bool, default = False )
    annotations = header.access( 'annotations', dict, default = { } )
    _validate_task_support( header, annotations )
    argschema = table.access_schema( 'arguments', name )
    outschema = table.access_schema( 'results', name, required = False )
    header.finish( )
    table.finish( )
    return _records.InvokerDescriptor(
        name = name, location = location, enabled = enabled,
        description = description,
        argschema = __.typx.cast( __.Schema, argschema ),
        outschema = outschema, implementation = implementation,
        function = function, timeout = timeout, max_retries = max_retries,
        deduplicate = deduplicate,
        annotations = __.immut.Dictionary( annotations ) )


def _validate_task_support(
    header: _Table, annotations: __.cabc.Mapping[ str, __.typx.Any ]
) -> None:
    ''' Fails on a hint (``readOnlyHint`` or ``read_only`` ...) which is
        not a boolean or is given twice differently, and on an unknown
        ``task_support`` (how the tool runs as a task when served).
    '''
    for key, ( wire, _ ) in _delegates.HINTS.items( ):
        given = { name: annotations[ name ]
                  for name in ( wire, key ) if name in annotations }
        for name, value in given.items( ):
            if isinstance( value, bool ): continue
            header.fail(
                f"annotations.{name}", "expected true or false, got "
                f"{__.values.abbreviate( repr( value ), 40 )}; a hint of "
                "another kind would be ignored." )
        if len( set( given.values( ) ) ) > 1:
            header.fail(
                f"annotations.{key}", f"'{wire}' and '{key}' say different "
                "things; keep one of them." )
    support = annotations.get( 'task_support', 'optional' )
    if support in _TASK_SUPPORTS: return
    header.fail(
        'annotations', "unknown task support {value!r} "
        "(task_support); use one of {known}.".format(
            value = support, known = ', '.join( _TASK_SUPPORTS ) ) )


def _produce_implementation(
    header: _Table,
    name: str,
    *,
    local: bool,
    importing: bool,
    module: __.Absential[ str ],
    required: bool,
) -> tuple[
    __.Absential[ str ],
    __.Absential[ __.cabc.Callable[ ..., __.typx.Any ] ],
]:
    if not local:
        if 'implementation' in header.table:
            header.fail(
                'implementation', "tools of an MCP server run on the "
                "server; remove 'implementation'." )
        return __.absent, __.absent
    if 'implementation' in header.table:
        implementation = header.access( 'implementation', str )
    elif not __.is_absent( module ):
        if not name.isidentifier( ):
            header.fail(
                'implementation', f"tool name {name!r} is not a Python "
                f"identifier, so no function of module {module!r} is named "
                "after it; give implementation = 'package.module:function' "
                "here." )
        implementation = f"{module}:{name}"
    elif not required: return __.absent, __.absent
    else:
        header.fail(
            'implementation', "missing required key 'implementation': give "
            "implementation = "
            "'package.module:function' here, or implementation = "
            "'package.module' in the [ensemble] table, whose function "
            f"{name!r} implements this tool." )
    if not _implementation_path.fullmatch( implementation ):
        header.fail(
            'implementation', f"{implementation!r} is not an import path; "
            "write 'package.module:function'." )
    # Disabled tools are not imported: their modules' code does not run.
    if not importing: return implementation, __.absent
    return implementation, import_function( header, implementation )


def _produce_roots(
    table: _Table, folder: __.Path
) -> tuple[ _records.Root, ... ]:
    roots: list[ _records.Root ] = [ ]
    for entry in table.access_tables( 'roots', default = ( ) ):
        path = _paths.resolve_folder(
            entry, 'path', entry.access( 'path', str ), folder,
            'the configuration file' )
        writable = entry.access( 'writable', bool, default = False )
        hard_links = entry.access( 'hard_links', bool, default = False )
        entry.finish( )
        roots.append( _records.Root(
            path = path, writable = writable, hard_links = hard_links ) )
    return tuple( roots )


def _produce_wrapping(
    entry: _Table
) -> __.immut.Dictionary[ str, __.typx.Any ]:
    ''' Returns ``include``, ``exclude``, ``prefix`` and ``rename`` given.

        Patterns are a glob or an array of globs; ``rename`` a table of
        tool names to new names.
    '''
    wrapping: dict[ str, __.typx.Any ] = { }
    for key in ( 'include', 'exclude' ):
        value = entry.access( key, object, default = __.absent )
        if __.is_absent( value ): continue
        if isinstance( value, str ): wrapping[ key ] = ( value, )
        else: wrapping[ key ] = entry.access_strings( key )
    prefix = entry.access( 'prefix', str, default = '' )
    if prefix: wrapping[ 'prefix' ] = prefix
    rename = entry.access_strings_mapping( 'rename' )
    for name, value in rename.items( ):
        flaw = _invokers.access_name_flaw( value )
        if flaw is not None:
            entry.fail(
                f"rename.{name}", "new name {label!r} is not allowed: "
                "{flaw}.".format(
                    label = _invokers.produce_name_label( value ),
                    flaw = flaw ) )
    if rename: wrapping[ 'rename' ] = rename
    return __.immut.Dictionary( wrapping )


def _read_source(
    source: str | _PathLike[ str ] | __.cabc.Mapping[ str, __.typx.Any ],
    location: __.Absential[ str ],
    read: __.cabc.Callable[ [ __.Path ], __.cabc.Mapping[ str, __.typx.Any ] ],
    *,
    expand: bool = True,
) -> tuple[ str, __.Path, __.cabc.Mapping[ str, __.typx.Any ] ]:
    ''' Returns location, folder and document of a file (read by read)
        or of a mapping (checked; its folder is the current directory).
    '''
    if isinstance( source, __.cabc.Mapping ):
        location_ = (
            _records.LOCATION_MAPPING if __.is_absent( location )
            else location )
        document = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], source )
        _reading.validate_document( location_, '', document )
        return location_, __.Path.cwd( ), document
    path = _paths.locate_file( source, expand = expand )
    return str( path ), path.parent, read( path )


def _resolve_builtin( entry: _Table ) -> __.Path:
    name = entry.access( 'builtin', str )
    folder = _paths.access_data_location( ) / 'ensembles'
    available = sorted( path.stem for path in folder.glob( '*.toml' ) )
    if not _name_builtin.fullmatch( name ) or name not in available:
        entry.fail(
            'builtin', "no built-in ensemble {name!r}; use one of "
            "{available}.".format(
                name = name, available = ', '.join( available ) ) )
    return folder / f"{name}.toml"


def _validate_ensemble_names(
    location: str,
    ensembles: tuple[ _records.EnsembleDescriptor, ... ],
    seen: dict[ str, str ],
) -> None:
    ''' Refuses names of ensembles seen (by name, their files); adds them.
    '''
    for ensemble in ensembles:
        if ensemble.name in seen:
            raise _exceptions.DescriptorInvalidity(
                ensemble.location, ensemble.keypath,
                "ensemble name {name!r} is also used by {other} (listed in "
                "{location}); give each ensemble a distinct name.".format(
                    name = ensemble.name, other = seen[ ensemble.name ],
                    location = location ) )
        seen[ ensemble.name ] = ensemble.location


def _validate_signature(
    header: _Table, implementation: str, function: object
) -> None:
    ''' Refuses callables which cannot take ( context, arguments ), and
        those whose calls give no value (generators, sync or async).
    '''
    function_ = __.typx.cast( __.cabc.Callable[ ..., __.typx.Any ], function )
    try: _invokers.validate_function( implementation, function_ )
    except _exceptions.InvokerInvalidity as exception:
        header.fail(
            'implementation', f"{implementation!r}: {exception.reason}",
            cause = exception )
    try: signature = __.inspect.signature( function_ )
    except ( TypeError, ValueError ): return # no signature to check
    try: signature.bind( None, None )
    except TypeError:
        header.fail(
            'implementation', f"{implementation!r} has the signature "
            f"{signature}, which cannot take ( context, arguments ); "
            "name a function with these two positional parameters." )

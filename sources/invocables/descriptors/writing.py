# SPDX-License-Identifier: Apache-2.0

''' Writing ensembles back into descriptors, with ``tomli-w``.

    Loading what is written gives the same ensemble: names, descriptions,
    schemas, timeouts, deduplication, annotations and, for local tools,
    import paths; for an MCP server, the ``[mcp]`` table and its pinned
    tools.
'''


import os as _os

from secrets import token_hex as _token_hex
from shutil import rmtree as _rmtree
from tempfile import mkdtemp as _mkdtemp

from os import PathLike as _PathLike

import invocables.descriptors.__ as __
import invocables.descriptors.assembly as _assembly
import invocables.descriptors.loading as _loading
import invocables.descriptors.paths as _paths
import invocables.descriptors.reading as _reading
import invocables.descriptors.records as _records
import invocables.descriptors.servers as _servers
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.schemata as _schemata


Documents: __.typx.TypeAlias = dict[ str, dict[ str, __.typx.Any ] ]

_variable_invalid = __.re.compile( r'[^A-Za-z0-9_]' )
_HEADER = (
    "# Written by invocables from ensemble {name!r}. Edit the descriptions\n"
    "# and schemas as you wish; see the reference of descriptors.\n\n" )


def create_descriptors(
    ensemble: _ensembles.Ensemble,
    folder: __.typx.Annotated[
        str | _PathLike[ str ],
        __.ddoc.Doc( ''' Folder which receives the descriptors. ''' ),
    ],
    *,
    server: __.typx.Annotated[
        __.Absential[ _records.ServerDescriptor ],
        __.ddoc.Doc(
            ''' How to reach the MCP server of the ensemble; needed for an
                MCP ensemble not loaded from descriptors. ''' ),
    ] = __.absent,
    replace: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether to replace existing descriptors. ''' ),
    ] = False,
) -> __.Path:
    ''' Writes descriptors of ensemble; returns path of ensemble file.

        Writes ``<name>.toml`` and ``<name>/invokers/<tool>.toml`` into
        the folder, each file atomically; ``<name>`` is the ensemble's name
        where it is a safe file name (letters, digits, ``_`` and ``-``),
        else a safe name made of it (see :py:func:`access_descriptor_path`);
        the descriptor keeps the real name. Loading the ensemble file gives
        the same ensemble: for an MCP server, its tools are then pinned.
        Refuses to replace existing descriptors unless asked; when
        replacing, removes invoker descriptors of tools which are gone. The
        descriptors are first written into a staging folder beside them
        and loaded from there: descriptors which would not load (such as
        the schemas of a hostile server, nested too deeply) raise
        :py:class:`invocables.exceptions.DescriptorInvalidity`, and nothing
        is written.
    '''
    folder = _access_folder( folder )
    documents = produce_documents( ensemble, server = server )
    target = folder / access_descriptor_path( ensemble.name )
    texts = {
        relative: _render_checked( folder / relative, ensemble, document )
        for relative, document in documents.items( ) }
    try: _write( folder, target, documents, texts, replace = replace )
    except OSError as exception:
        raise _exceptions.DescriptorInvalidity(
            str( folder ), '', f"cannot write the descriptors ({exception}); "
            "check that the folder can be written, or choose another."
        ) from exception
    return target


def _write(
    folder: __.Path, target: __.Path, documents: 'Documents',
    texts: dict[ str, str ], *, replace: bool,
) -> None:
    ''' Writes texts into staging folder, checks them, moves them in. '''
    name = documents[ target.name ][ 'ensemble' ][ 'name' ]
    _validate_destinations( folder, target, texts, name, replace = replace )
    folder.mkdir( parents = True, exist_ok = True )
    stem = target.stem
    staging = __.Path( _mkdtemp(
        prefix = f".{stem}.", suffix = '.staging', dir = folder ) )
    try:
        for relative, text in texts.items( ):
            _write_staged( staging / relative, text )
        _validate_staged( staging, folder, target.name )
        invokers_folder = _prepare_invokers_folder( folder, stem )
        if replace: _delete_stale( invokers_folder, folder, documents )
        # The ensemble file last: it names the others.
        for relative in sorted(
            texts, key = lambda item: item == target.name
        ): _os.replace( staging / relative, folder / relative )
    finally: _rmtree( staging, ignore_errors = True )


def access_descriptor_path( name: str ) -> str:
    ''' Returns file name of the descriptor of the ensemble of name.

        The name itself where it is a safe file name (letters, digits,
        ``_`` and ``-``, at most 64), else a safe name made of it, stable
        and distinct for distinct names (``io.github.owner/server`` gives
        ``io_github_owner_server_<digest>``); a device name which Windows
        reserves (``con``, ``aux``) gets a digest too.
    '''
    return f"{_paths.produce_file_stems( ( name, ) )[ name ]}.toml"


def produce_documents(
    ensemble: _ensembles.Ensemble,
    *,
    server: __.Absential[ _records.ServerDescriptor ] = __.absent,
) -> Documents:
    ''' Returns descriptors of ensemble as TOML documents, by file path.

        Paths are relative to the folder which would hold them; the first
        is the ensemble descriptor, ``<name>.toml``.
    '''
    if __.is_absent( server ): server = _access_server( ensemble )
    local = __.is_absent( server )
    header: dict[ str, __.typx.Any ] = { 'name': ensemble.name }
    description = ensemble.configuration.description
    if description: header[ 'description' ] = description
    document: dict[ str, __.typx.Any ] = { 'ensemble': header }
    timeout = ensemble.configuration.timeout
    if not __.is_absent( timeout ) and (
        local or __.is_absent( server.tool_timeout ) # given once
    ): document[ 'defaults' ] = { 'timeout': _render_timeout( timeout ) }
    invokers = ensemble.survey_invokers( )
    if local: _add_configuration( document, invokers )
    else: document[ 'mcp' ] = _produce_server_table( ensemble.name, server )
    path = access_descriptor_path( ensemble.name )
    documents: Documents = { path: document }
    entries: list[ dict[ str, str ] ] = [ ]
    stems = _paths.produce_file_stems(
        [ invoker.name for invoker in invokers ] )
    for invoker in invokers:
        relative = "{ensemble}/invokers/{name}.toml".format(
            ensemble = path.removesuffix( '.toml' ),
            name = stems[ invoker.name ] )
        documents[ relative ] = _produce_invoker_document(
            ensemble, invoker, local = local )
        entries.append( { 'source': relative } )
    if entries: document[ 'invokers' ] = entries
    return documents


def _access_folder( folder: object ) -> __.Path:
    ''' Returns path of folder named by application. '''
    try: path = __.Path( __.typx.cast( str, folder ) )
    except TypeError as exception:
        raise _exceptions.DescriptorInvalidity(
            repr( folder ), '', "expected the path of a folder to write "
            "the descriptors into." ) from exception
    if '\0' in str( path ):
        raise _exceptions.DescriptorInvalidity(
            repr( str( path ) ), '', "the path holds a NUL character; "
            "correct it." )
    return path


def _access_ensemble_name( path: __.Path ) -> object:
    ''' Returns name of ensemble which file describes; None if unreadable.
    '''
    try: document = _reading.read_toml( path )
    except _exceptions.DescriptorInvalidity: return None
    header: object = document.get( 'ensemble' )
    if not isinstance( header, dict ): return None
    return __.typx.cast( dict[ str, object ], header ).get( 'name' )


def _access_server(
    ensemble: _ensembles.Ensemble
) -> __.Absential[ _records.ServerDescriptor ]:
    ''' Returns server descriptor of pinned or MCP ensemble, if any. '''
    if isinstance( ensemble, _assembly.PinnedEnsemble ):
        return ensemble.server
    return _servers.access_server_descriptor( ensemble )


def _access_tool_timeout(
    ensemble: _ensembles.Ensemble, name: str
) -> __.Absential[ float | None ]:
    ''' Returns own timeout of tool of MCP ensemble, if it has one. '''
    if isinstance( ensemble, _assembly.PinnedEnsemble ):
        return next( (
            descriptor.timeout for descriptor in ensemble.descriptors
            if descriptor.name == name ), __.absent )
    timeouts = _servers.access_tool_timeouts( ensemble )
    if name in timeouts: return timeouts[ name ]
    return __.absent


def _add_configuration(
    document: dict[ str, __.typx.Any ],
    invokers: __.cabc.Sequence[ _invokers.Invoker ],
) -> None:
    configuration = next( (
        invoker.configuration for invoker in invokers
        if isinstance( invoker, _assembly.DescriptorInvoker )
        and invoker.configuration ), None )
    if configuration:
        document[ 'configuration' ] = _produce_toml_value( configuration )


def _delete_stale(
    invokers_folder: __.Path, folder: __.Path, documents: Documents
) -> None:
    wanted = { ( folder / relative ).resolve( ) for relative in documents }
    for path in invokers_folder.glob( '*.toml' ):
        # Folders are not descriptors which writing made: they stay.
        if path.is_dir( ) and not path.is_symlink( ): continue
        if path.resolve( ) not in wanted: path.unlink( )


def _prepare_invokers_folder( folder: __.Path, name: str ) -> __.Path:
    ''' Makes folder of invoker descriptors; refuses one which leaves the
        folder (through a symbolic link), whose files could be deleted.
    '''
    invokers_folder = folder / name / 'invokers'
    invokers_folder.mkdir( parents = True, exist_ok = True )
    base = folder.resolve( )
    if base not in invokers_folder.resolve( ).parents:
        raise _exceptions.DescriptorInvalidity(
            str( invokers_folder ), '', f"the folder leaves '{base}' (a "
            "symbolic link); remove the link or choose another folder." )
    return invokers_folder


def _has_null( value: object ) -> bool:
    if value is None: return True
    if isinstance( value, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ str, object ], value )
        return any( _has_null( item ) for item in mapping.values( ) )
    if isinstance( value, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        return any( _has_null( item ) for item in items )
    return False


def _produce_invoker_document(
    ensemble: _ensembles.Ensemble,
    invoker: _invokers.Invoker,
    *,
    local: bool,
) -> dict[ str, __.typx.Any ]:
    header: dict[ str, __.typx.Any ] = { 'name': invoker.name }
    if invoker.description: header[ 'description' ] = invoker.description
    if local:
        if not isinstance( invoker, _assembly.DescriptorInvoker ):
            raise _exceptions.DescriptorInvalidity(
                f"ensemble {ensemble.name!r}", f"invokers.{invoker.name}",
                "the tool was not made from a descriptor, so its import "
                "path is unknown; write its descriptor by hand." )
        header[ 'implementation' ] = invoker.implementation
    timeout = (
        invoker.timeout if local
        else _access_tool_timeout( ensemble, invoker.name ) )
    if not __.is_absent( timeout ):
        header[ 'timeout' ] = _render_timeout( timeout )
    if not __.is_absent( invoker.deduplicator ):
        header[ 'deduplicate' ] = True
    annotations = _produce_toml_value( invoker.annotations )
    if annotations: header[ 'annotations' ] = annotations
    document: dict[ str, __.typx.Any ] = {
        'invoker': header,
        'arguments': _render_schema( invoker.arguments_schema ) }
    if not __.is_absent( invoker.outschema ):
        document[ 'results' ] = _render_schema( invoker.outschema )
    return document


def _produce_choices(
    server: _records.ServerDescriptor
) -> dict[ str, __.typx.Any ]:
    ''' Returns entries of the choices which differ from their defaults:
        resources as tools, tools as tasks, the opening handshake.
    '''
    entries: dict[ str, __.typx.Any ] = { }
    if server.resources_as_tools: entries[ 'resources_as_tools' ] = True
    if not __.is_absent( server.tasks ): entries[ 'tasks' ] = server.tasks
    if not __.is_absent( server.protocol ):
        entries[ 'protocol' ] = server.protocol
    return entries


def _produce_server_table(
    name: str, server: _records.ServerDescriptor
) -> dict[ str, __.typx.Any ]:
    table: dict[ str, __.typx.Any ] = { 'transport': server.transport }
    secrets = _SecretReferences( name )
    if server.command: table[ 'command' ] = list( server.command )
    if server.environment:
        table[ 'environment' ] = {
            key: secrets.protect( key, value, key )
            for key, value in server.environment.items( ) }
    if not __.is_absent( server.cwd ): table[ 'cwd' ] = str( server.cwd )
    if not __.is_absent( server.url ):
        table[ 'url' ] = secrets.protect_url( server.url )
    if server.headers:
        table[ 'headers' ] = {
            key: secrets.protect( key, value, f"{name}_{key}" )
            for key, value in server.headers.items( ) }
    for key in ( 'startup_timeout', 'tool_timeout' ):
        value = getattr( server, key )
        if not __.is_absent( value ): table[ key ] = value
    if not __.is_absent( server.enabled_tools ):
        table[ 'enabled_tools' ] = list( server.enabled_tools )
    if server.disabled_tools:
        table[ 'disabled_tools' ] = list( server.disabled_tools )
    table.update( _produce_choices( server ) )
    table.update( _produce_sandbox_entry( server ) )
    if server.authorization: # expose
        table[ 'authorization' ] = _produce_authorization_table(
            name, server.authorization, secrets )
    secrets.warn( )
    return table


def _produce_sandbox_entry(
    server: _records.ServerDescriptor
) -> dict[ str, __.typx.Any ]:
    ''' Returns ``sandbox`` of ``[mcp]`` (true, or its keys), if any.

        Never dropped: the server written runs as confined as read.
    '''
    sandbox = server.sandbox
    if __.is_absent( sandbox ): return { }
    if isinstance( sandbox, bool ): return { 'sandbox': sandbox }
    return { 'sandbox': {
        key: list( __.typx.cast( tuple[ str, ... ], value ) )
        if isinstance( value, tuple ) else value
        for key, value in sandbox.items( ) } }


def _produce_authorization_table(
    name: str,
    authorization: __.cabc.Mapping[ str, __.typx.Any ],
    secrets: '_SecretReferences',
) -> dict[ str, __.typx.Any ]:
    ''' Returns ``[mcp.authorization]``; a literal token or client secret
        becomes an ``env:`` reference: no secret is ever written.
    '''
    table = dict( authorization )
    for key in (
        'token', 'client_secret', 'identity_token',
        'identity_provider_client_secret',
    ):
        if key in table:
            table[ key ] = secrets.refer( table[ key ], f"{name}_{key}" )
    # A key file's path is written as it is; the key itself never.
    key = table.get( 'private_key', '' )
    if key.lstrip( ).startswith( '-----BEGIN' ):
        table[ 'private_key' ] = secrets.refer( key, f"{name}_private_key" )
    # So is a workload's JWT file; the JWT itself never.
    assertion = table.get( 'assertion', '' )
    if __.is_jwt( assertion ):
        table[ 'assertion' ] = secrets.refer( assertion, f"{name}_assertion" )
    return table


def _produce_toml_value( value: object ) -> __.typx.Any:
    ''' Returns plain TOML value; drops nulls, which TOML cannot hold. '''
    dump = getattr( value, 'model_dump', None )
    if callable( dump ): value = dump( mode = 'json', exclude_none = True )
    if isinstance( value, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ str, object ], value )
        return {
            key: _produce_toml_value( item )
            for key, item in mapping.items( ) if item is not None }
    if isinstance( value, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        return [ _produce_toml_value( item ) for item in items ]
    return value


def _render(
    ensemble: _ensembles.Ensemble, document: dict[ str, __.typx.Any ]
) -> str:
    import tomli_w
    # tomli-w writes a carriage return inside a multi-line string as is,
    # which TOML readers turn into a plain newline: escape such texts.
    return _HEADER.format( name = ensemble.name ) + tomli_w.dumps(
        document, multiline_strings = not _is_carrying_return( document ) )


def _is_carrying_return( value: object ) -> bool:
    ''' Whether any text within value holds a carriage return. '''
    if isinstance( value, str ): return '\r' in value
    if isinstance( value, dict ):
        items = __.typx.cast( dict[ object, object ], value )
        return any(
            _is_carrying_return( key ) or _is_carrying_return( item )
            for key, item in items.items( ) )
    if isinstance( value, ( list, tuple ) ):
        return any(
            _is_carrying_return( item )
            for item in __.typx.cast( __.cabc.Sequence[ object ], value ) )
    return False


def _render_checked(
    path: __.Path,
    ensemble: _ensembles.Ensemble,
    document: dict[ str, __.typx.Any ],
) -> str:
    ''' Returns TOML text of document; refuses what TOML or UTF-8 cannot
        hold, naming the file which it would be.
    '''
    try: text = _render( ensemble, document )
    except RecursionError as exception:
        raise _exceptions.DescriptorInvalidity(
            str( path ), '', "the descriptor nests too deeply to be "
            f"written (at most {_reading.DEPTH_MAXIMUM} levels load); "
            "nothing was written." ) from exception
    except ( TypeError, ValueError ) as exception:
        raise _exceptions.DescriptorInvalidity(
            str( path ), '', f"the descriptor cannot be written as TOML "
            f"({exception}); nothing was written." ) from exception
    try: text.encode( 'utf-8' )
    except UnicodeEncodeError as exception:
        raise _exceptions.DescriptorInvalidity(
            str( path ), '', "the descriptor holds text which is not "
            f"Unicode ({exception.reason}); nothing was written."
        ) from exception
    return text


def _render_schema( schema: __.Schema ) -> __.typx.Any:
    ''' Returns schema as table, or as JSON text if it holds nulls. '''
    plain = _schemata.thaw_json( schema )
    if _has_null( plain ): return __.json.dumps( plain, indent = 2 )
    return plain


def _render_timeout( timeout: float | None ) -> float:
    return float( 'inf' ) if timeout is None else timeout


class _SecretReferences:
    ''' Replaces literal secrets of a server by ``env:`` references.

        Values under keys which name a secret (``Authorization``,
        ``API_KEY``, ``token`` ...) and passwords of URLs are written as
        references to variables named after the key; the names are told in
        one warning.
    '''

    def __init__( self, ensemble: str ):
        self.ensemble = ensemble
        self.references: list[ str ] = [ ]
        self.variables: dict[ str, str ] = { } # by name made of them

    def protect( self, key: str, value: str, variable: str ) -> str:
        ''' Returns value, or a reference if it is a literal secret. '''
        from ..mcp.redaction import is_secret_key
        if value.startswith( __.ENVIRONMENT_PREFIX ): return value
        if not is_secret_key( key ): return value
        return self._refer( variable )

    def protect_url( self, url: str ) -> str:
        ''' Returns URL with literal password and secrets referenced. '''
        from urllib.parse import unquote, urlsplit, urlunsplit
        from ..mcp.configuration import split_userinfo
        parts = urlsplit( url )
        netloc, query = parts.netloc, parts.query
        if '@' in netloc:
            userinfo, host = netloc.rsplit( '@', maxsplit = 1 )
            user, colon, password = split_userinfo( userinfo )
            if colon:
                password = self.protect(
                    'password', password, f"{self.ensemble}_password" )
            else:
                user = self.protect(
                    'password', user, f"{self.ensemble}_user" )
            netloc = f"{user}{colon}{password}@{host}"
        if query:
            query = '&'.join(
                self._protect_query( item, unquote )
                for item in query.split( '&' ) )
        return urlunsplit( (
            parts.scheme, netloc, parts.path, query, parts.fragment ) )

    def refer( self, value: str, variable: str ) -> str:
        ''' Returns value if a reference, else a reference in its place. '''
        if value.startswith( __.ENVIRONMENT_PREFIX ): return value
        return self._refer( variable )

    def warn( self ) -> None:
        ''' Warns of the references made, if any. '''
        if not self.references: return
        import warnings
        warnings.warn(
            _exceptions.SecretReferenceWarning(
                self.ensemble, self.references ), stacklevel = 2 )

    def _protect_query(
        self, item: str, unquote: __.cabc.Callable[ [ str ], str ]
    ) -> str:
        key, equal, value = item.partition( '=' )
        return f"{key}{equal}" + self.protect(
            unquote( key ), value, f"{self.ensemble}_{unquote( key )}" )

    def _refer( self, variable: str ) -> str:
        ''' Returns reference to variable named after variable; distinct
            ones where names differ only by case or unsafe characters
            (``X-Api-Key`` and ``x_api_key``), so that no secret reads
            another's variable.
        '''
        name = _variable_invalid.sub( '_', variable ).upper( )
        if name[ 0 ].isdigit( ): name = f"_{name}"
        if self.variables.setdefault( name, variable ) != variable:
            digest = __.hashlib.sha256(
                variable.encode( 'utf-8', 'surrogatepass' ) ).hexdigest( )
            name = f"{name}_{digest[ : 8 ].upper( )}"
            self.variables[ name ] = variable
        if name not in self.references: self.references.append( name )
        return f"{__.ENVIRONMENT_PREFIX}{name}"


def _validate_destinations(
    folder: __.Path, target: __.Path, texts: __.cabc.Mapping[ str, str ],
    name: str, *, replace: bool,
) -> None:
    ''' Refuses an existing ensemble file unless replacing, also when
        replacing if it describes another ensemble (whose name gives the
        same file name, as ``Echo`` and ``echo`` where case is not told
        apart), and destinations which are folders, before writing.
    '''
    if not _os.path.lexists( target ): pass
    elif not replace:
        raise _exceptions.DescriptorInvalidity(
            str( target ), '', "the file exists already; choose another "
            "folder or ask to replace it." )
    elif ( other := _access_ensemble_name( target ) ) not in ( None, name ):
        raise _exceptions.DescriptorInvalidity(
            str( target ), 'ensemble.name', "the file describes another "
            f"ensemble, {other!r}, which replacing would delete; choose "
            "another folder." )
    for relative in texts:
        path = folder / relative
        if path.is_dir( ):
            raise _exceptions.DescriptorInvalidity(
                str( path ), '', "a folder is in the place of this "
                "descriptor; remove it or choose another folder. Nothing "
                "was written." )


def _validate_staged(
    staging: __.Path, folder: __.Path, name: str
) -> None:
    ''' Loads staged ensemble descriptor; errors name the final files. '''
    try: _loading.produce_ensemble_descriptor( staging / name )
    except _exceptions.DescriptorInvalidity as exception:
        location = exception.location.replace(
            str( staging ), str( folder ), 1 )
        raise _exceptions.DescriptorInvalidity(
            location, exception.keypath,
            f"{exception.reason} The descriptors would not load as "
            "written, so nothing was written." ) from exception


def _write_staged( path: __.Path, text: str ) -> None:
    ''' Writes text to file of staging folder, atomically but not durably:
        the staged files are then renamed into place.
    '''
    path.parent.mkdir( parents = True, exist_ok = True )
    temporary = path.with_name( ".{name}.{token}.tmp".format(
        name = path.name, token = _token_hex( 6 ) ) )
    try:
        temporary.write_text( text, encoding = 'utf-8' )
        _os.replace( temporary, path )
    except BaseException:
        temporary.unlink( missing_ok = True )
        raise

# SPDX-License-Identifier: Apache-2.0
''' Sphinx configuration. '''

import sys

from pathlib import Path


_root = Path( __file__ ).parent.parent
sys.path.insert( 0, str( _root / 'sources' ) )

project = 'invocables'
author = 'The invocables developers'
copyright = '2026, The invocables developers'  # noqa: A001
extensions = [
    'sphinx.ext.autodoc',
    'sphinx.ext.doctest',
    'sphinx.ext.intersphinx',
    'sphinx.ext.viewcode',
]
templates_path = [ ]
exclude_patterns = [ '_build' ]
html_theme = 'furo'
html_static_path = [ ]
autodoc_default_options = {
    'members': True,
    'show-inheritance': True,
    'member-order': 'bysource',
}
autodoc_typehints = 'description'
autodoc_type_aliases = { }
nitpicky = False
suppress_warnings = [ 'ref.python' ]
intersphinx_mapping = { }

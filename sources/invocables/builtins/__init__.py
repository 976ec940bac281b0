# SPDX-License-Identifier: Apache-2.0

''' Implementations of the built-in ensembles, which the descriptors
    shipped with the package (``data/ensembles``) name by import path.

    ``io`` (:py:mod:`invocables.builtins.io`): files within roots, opened
    safely by :py:mod:`invocables.builtins.files`.
'''


from . import __

"""The grouper (``grouper``: its public surface) and its parts, in the order a call uses them.

On the geometry of ``vision.geometry.boxes`` (duplicate boxes) and ``vision.geometry.rows`` (rows and clusters
of boxes, shared with the photo stages that turn and fit rows): ``melds`` (a run of tiles read as melds),
``layout`` (clusters with what their tiles are), ``plan`` (which row is the hand and what counts towards
it), ``concealed`` (which clusters of that row are concealed tiles), ``assemble`` (the winning tile, the
hand, groups and warnings), ``result`` (the values returned). A part with thresholds keeps them in a
frozen config of its own (``LayoutConfig``, ``PlanConfig``, ``ConcealedConfig``, ``AssemblyConfig``; the
rows' ``RowsConfig``), each with its defaults as a module-level instance; ``grouper.GrouperConfig``
composes them.
"""

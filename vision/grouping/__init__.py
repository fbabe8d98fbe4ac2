"""The grouper's parts, behind the public surface of ``vision.grouper``.

``rows`` (geometry: rows and clusters of boxes), ``melds`` (reading a run of tiles as melds),
``layout`` (clusters with what their tiles are), ``reading`` (the decisions and warnings),
``boxes`` (duplicate boxes), ``result`` (the values returned).
"""

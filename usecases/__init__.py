"""What the command line and the API both do, in one place: the use cases between the libraries (``scoring``,
``vision``, ``datasets``, ``store``) and the two faces (``api``, the ``cli`` modules). A face parses, calls
one of these, and prints or answers; model work and database work are separate steps, so a face runs each
where it runs such work (the API: its model pool and its store pool) and no classifier runs inside a
database transaction."""

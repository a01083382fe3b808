-- When each terminal last asked about each container, so that one terminal's ask does not
-- hold another off (two terminals can serve one port). Read by the terminal selection one
-- row per container, by its primary key. Rows of containers that are out or gone are not
-- cleaned up: nothing reads them.
CREATE TABLE terminal_checks (
    terminal      text NOT NULL,
    container_id  uuid NOT NULL,
    asked_at      timestamptz NOT NULL,
    PRIMARY KEY (terminal, container_id)
);

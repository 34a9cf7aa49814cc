-- One round trip that does nothing: what this machine's round trip costs.
SELECT 1;

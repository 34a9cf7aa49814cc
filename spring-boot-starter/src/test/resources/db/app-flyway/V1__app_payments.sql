-- The application's own migration (ApplicationFlywayTest), in the schema the inbox's table shares.
CREATE TABLE app_payments (id bigint PRIMARY KEY, amount_cents bigint NOT NULL);

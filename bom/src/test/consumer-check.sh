#!/usr/bin/env bash
# Proof that the published artifacts work for a user (issue 21): deploy them to a staging repository
# under bom/target/, then build and run bom/src/test/consumer, a project that imports inbox-bom and
# depends on consumer-core and kafka-adapter without versions, against that repository alone.
# Never touches ~/.m2 (the consumer build has its own local repository under bom/target/) and needs
# no network once the main build has cached the third-party artifacts. Run it after ./mvnw -B verify.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
work="$root/bom/target/consumer-check"
export INBOX_STAGING="$work/staging"
# The tests' database setting (README, Tests), else the local PostgreSQL.
url="${INBOX_TEST_JDBC_URL:-jdbc:postgresql://127.0.0.1:5432/test?user=postgres}"
version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' bom/pom.xml | head -n 1)
rm -rf "$work" && mkdir -p "$work"

echo "consumer check: deploying inbox $version to $INBOX_STAGING"
# Not -o: the deploy plugin refuses offline mode even for a file:// repository. Nothing is fetched:
# the main build has cached every plugin and dependency this needs.
./mvnw -B -q deploy -DskipTests \
  -pl bom,consumer-core,kafka-adapter,rabbit-adapter,http-adapter -am \
  -DaltDeploymentRepository="staging::file://$INBOX_STAGING"

cp -r bom/src/test/consumer "$work/project"
echo "consumer check: building a project that knows inbox only through inbox-bom $version"
./mvnw -B -q -f "$work/project/pom.xml" -s bom/src/test/consumer-settings.xml \
  -Dmaven.repo.local="$work/m2" -Dinbox.version="$version" \
  compile org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath \
  -Dmdep.outputFile="$work/classpath.txt"

# Every inbox jar on the classpath came from the staging repository, at the staged version.
if grep -o '[^:]*dev/inbox/[^:]*' "$work/classpath.txt" | grep -v "^$work/m2/dev/inbox/"; then
  echo "consumer check FAILED: an inbox jar came from outside the staging repository" >&2
  exit 1
fi
java -cp "$work/project/target/classes:$(cat "$work/classpath.txt")" example.consumer.ConsumerCheck "$url"

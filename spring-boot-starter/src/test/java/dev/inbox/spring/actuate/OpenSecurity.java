package dev.inbox.spring.actuate;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Spring Security is on the test classpath for {@link InboxEndpointSecurityTest}; the other tests
 * open every request, as an application without Spring Security would, so that the actor is the
 * configured fallback.
 */
@Configuration(proxyBeanMethods = false)
class OpenSecurity {
  @Bean
  SecurityFilterChain everythingOpen(HttpSecurity http) throws Exception {
    return http.authorizeHttpRequests(requests -> requests.anyRequest().permitAll())
        .csrf(csrf -> csrf.disable())
        .build();
  }
}

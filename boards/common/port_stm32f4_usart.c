/* Port for STM32F4 parts (QEMU netduinoplus2 = STM32F405): USART console (SR/DR/BRR/CR1 layout);
 * the cycle counter and exit come from systick_semihost.c. Registers from RM0090.
 * The GPIO/RCC set-up is what a real board needs; QEMU ignores it. */
#include <stdint.h>

#include "mcu/port.h"
#include "mcu/port_systick.h"

#ifndef MCU_UART_BASE
#error "MCU_UART_BASE must be defined by the board"
#endif
#ifndef MCU_BAUD
#define MCU_BAUD 115200u
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))
#define USART_SR REG(MCU_UART_BASE + 0x00u)
#define USART_DR REG(MCU_UART_BASE + 0x04u)
#define USART_BRR REG(MCU_UART_BASE + 0x08u)
#define USART_CR1 REG(MCU_UART_BASE + 0x0Cu)
#define RCC_AHB1ENR REG(0x40023830u)
#define RCC_APB2ENR REG(0x40023844u)
#define GPIOA_MODER REG(0x40020000u)
#define GPIOA_AFRH REG(0x40020024u)

void mcu_port_init(void) {
  RCC_AHB1ENR |= 1u << 0;  /* GPIOA */
  RCC_APB2ENR |= 1u << 4;  /* USART1 */
  GPIOA_MODER = (GPIOA_MODER & ~(0xFu << 18)) | (0xAu << 18);  /* PA9, PA10 alternate */
  GPIOA_AFRH = (GPIOA_AFRH & ~(0xFFu << 4)) | (0x77u << 4);    /* AF7 = USART1 */
  USART_BRR = (MCU_CLOCK_HZ / 2u + MCU_BAUD / 2u) / MCU_BAUD;  /* APB2 = HCLK / 2 */
  USART_CR1 = (1u << 13) | (1u << 3) | (1u << 2);              /* UE, TE, RE */
  mcu_systick_start();
}

int mcu_port_getc(uint32_t timeout_ms) {
  if (mcu_systick_wait_bits(&USART_SR, 1u << 5, timeout_ms) != 0) {
    return -1;
  }
  return (int)(USART_DR & 0xFFu);
}

void mcu_port_putc(uint8_t c) {
  while ((USART_SR & (1u << 7)) == 0u) {
  }
  USART_DR = c;
}
